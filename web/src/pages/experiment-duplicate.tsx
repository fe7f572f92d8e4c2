import { api } from '../api.js';
import { Field, FormCard } from '../components/ui.js';
import { useFormFields, useSubmit } from '../hooks.js';
import { KEY_PATTERN } from '../patterns.js';
import { navigate } from '../router.js';
import type { Experiment } from '../types.js';

/** A key not taken yet in most workspaces: "checkout-copy", the same with a number after. */
function copyKey(key: string): string {
  return `${key.slice(0, 120)}-copy`;
}

/**
 * Starts a new draft from this experiment's definition (variants at their starting weights,
 * metrics, rule, allocation, audience, auto-stop) under a new key; results are not copied.
 */
export function DuplicateForm({ experiment, onCancel }: { experiment: Experiment; onCancel: () => void }) {
  const { form, bind } = useFormFields({ key: copyKey(experiment.key), name: `Copy of ${experiment.name}` });
  const submit = useSubmit();
  const duplicate = async () => {
    const created = await api<Experiment>('POST', `/v1/experiments/${experiment.id}/duplicate`, { key: form.key, name: form.name });
    navigate(`/experiments/${created.id}`);
  };
  return (
    <FormCard id="duplicate-title" title="Duplicate as a new draft" submitLabel="Create the copy" onSubmit={duplicate} submit={submit}>
      <p class="hint">The copy starts as a draft with the same variants, metrics, decision rule, allocation, audience and auto-stop; no results.</p>
      <div class="row">
        <Field label="New key" required pattern={KEY_PATTERN} value={form.key} onInput={bind('key')} error={submit.errorAt('/key')} />
        <Field label="New name" required value={form.name} onInput={bind('name')} error={submit.errorAt('/name')} />
      </div>
      <button type="button" onClick={onCancel}>
        Cancel
      </button>
    </FormCard>
  );
}
