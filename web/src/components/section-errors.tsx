import type { FieldError } from '../api.js';

/**
 * The server's problems under a section's pointer that no field of it shows on its own (a field
 * shows its own through `errorAt`), so a 422 is never only in the summary at the foot of a form.
 */
export function SectionErrors({ errors, prefix, shown }: { errors: FieldError[]; prefix: string; shown: string[] }) {
  const left = errors.filter((error) => error.pointer !== undefined && error.pointer.startsWith(prefix) && !shown.includes(error.pointer));
  if (left.length === 0) return null;
  return (
    <p class="field-error" role="alert">
      {left.map((error) => error.message).join('; ')}
    </p>
  );
}

/** The pointers of the metrics section, whose pickers have no error slot of their own. */
export const METRIC_POINTERS = ['/primary_metric_id', '/guardrail_metric_ids', '/secondary_metric_ids', '/multiple_testing'] as const;
