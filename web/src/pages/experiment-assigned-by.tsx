import { useState } from 'preact/hooks';
import { api, type Page } from '../api.js';
import { Field, Select } from '../components/ui.js';
import { useResource } from '../hooks.js';
import { Link } from '../router.js';
import type { AssignmentSource } from './warehouse/types.js';

export interface AssignedBy {
  /** '' when Verdict assigns; else the assignment source's id. */
  sourceId: string;
  /** The experiment's key in the source when it differs from Verdict's ('' for the same). */
  sourceKey: string;
}

/** Who assigns a new experiment's units, and the fields it adds to the body when it is an assignment source. */
export function useAssignedBy() {
  const [assignedBy, setAssignedBy] = useState<AssignedBy>({ sourceId: '', sourceKey: '' });
  const bodyFields = () =>
    assignedBy.sourceId
      ? { assignment_source_id: assignedBy.sourceId, ...(assignedBy.sourceKey ? { assignment_experiment_key: assignedBy.sourceKey } : {}) }
      : {};
  return { assignedBy, setAssignedBy, bodyFields };
}

/** Verdict's SDKs, or "Assigned elsewhere": an assignment source whose exposures the analysis reads (analysis-only). */
export function AssignedByFieldset({
  value,
  onValue,
  errorAt,
}: {
  value: AssignedBy;
  onValue: (next: AssignedBy) => void;
  errorAt: (pointer: string) => string | null;
}) {
  const sources = useResource(() => api<Page<AssignmentSource>>('GET', '/v1/assignment-sources?limit=200'), []);
  const options = [
    { value: '', label: 'Verdict (SDKs call assign)' },
    ...(sources.data?.data ?? []).map((source) => ({ value: source.id, label: `Assigned elsewhere (assignment source): ${source.name}` })),
  ];
  return (
    <fieldset>
      <legend>Assignment</legend>
      <Select
        label="Assigned by"
        value={value.sourceId}
        options={options}
        onChange={(event) => onValue({ ...value, sourceId: event.currentTarget.value })}
        error={errorAt('/assignment_source_id')}
        hint="An experiment assigned elsewhere is analysis-only: Verdict assigns none of its units and reads their exposures from the source."
      />
      {value.sourceId ? (
        <Field
          label="Key in the assignment source"
          value={value.sourceKey}
          onInput={(event) => onValue({ ...value, sourceKey: event.currentTarget.value })}
          error={errorAt('/assignment_experiment_key')}
          hint="Leave empty when the source names the experiment by its key here."
        />
      ) : (
        <p class="muted">
          Experiments assigned by another system read their exposures from an <Link href="/assignment-sources">assignment source</Link>.
        </p>
      )}
    </fieldset>
  );
}
