import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorBox, Field, Select } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useAction } from '../hooks.js';
import type { Assignment, Experiment } from '../types.js';

interface Lookup {
  unit: string;
  assignment: Assignment | null;
}

/** How the unit got its assignment, in words (the API's reason codes are for programs). */
const REASON_WORDS: Record<Assignment['reason'], string> = {
  bucketed: 'bucketed by its unit id',
  forced: 'pinned here',
  mutex_holdout: 'held out by its mutual exclusion group',
  audience_excluded: 'outside the audience',
  launched: 'given the launched variant',
  holdout: 'kept on the control by a holdout',
};

/** What a stored assignment means, in a sentence. */
function describe({ unit, assignment }: Lookup): string {
  if (!assignment) return `${unit} has no stored assignment in this experiment; the next assign buckets it.`;
  const exposure = assignment.exposure_logged_at ? `, exposed ${dateTime(assignment.exposure_logged_at)}` : ', no exposure logged';
  const how = REASON_WORDS[assignment.reason] ?? assignment.reason;
  if (assignment.variant === null) return `${unit} is held out (${how})${exposure}.`;
  return `${unit} is in "${assignment.variant}" (${how})${exposure}.`;
}

interface PinControlsProps {
  variants: { value: string; label: string }[];
  variant: string;
  onVariant: (variant: string) => void;
  disabled: boolean;
  onPin: () => void;
  onUnpin: () => void;
  onRebucket: () => void;
}

function PinControls({ variants, variant, onVariant, disabled, onPin, onUnpin, onRebucket }: PinControlsProps) {
  return (
    <div class="unit-tools">
      <Select label="Variant to pin" value={variant} options={variants} onChange={(e) => onVariant(e.currentTarget.value)} />
      <button type="button" disabled={disabled} onClick={onPin}>
        Pin to variant
      </button>{' '}
      <button type="button" disabled={disabled} onClick={onUnpin}>
        Remove pin
      </button>{' '}
      <button type="button" class="danger" disabled={disabled} onClick={onRebucket}>
        Re-bucket
      </button>
    </div>
  );
}

/**
 * QA on one unit: look up its stored assignment, pin it to a variant (an override answers
 * "forced" and stays out of the analysis), remove the pin, or re-bucket it (the assignment is
 * deleted and its exposures superseded, audit-logged).
 */
export function UnitTools({ experiment }: { experiment: Experiment }) {
  const action = useAction();
  const [unitId, setUnitId] = useState('');
  const [variant, setVariant] = useState(experiment.variants[0]?.key ?? '');
  const [lookup, setLookup] = useState<Lookup | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const unit = unitId.trim();
  const path = encodeURIComponent(unit);
  const done = (text: string) => {
    setMessage(text);
    setLookup(null);
  };

  const look = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const found = await api<{ assignments: Assignment[] }>('GET', `/v1/assignments/${path}`);
      setLookup({ unit, assignment: found.assignments.find((a) => a.experiment_key === experiment.key) ?? null });
      setMessage(null);
    });
  };
  const pin = () =>
    action.run(async () => {
      await api('PUT', `/v1/experiments/${experiment.id}/overrides/${path}`, { variant });
      done(`${unit} is pinned to "${variant}": every assign answers it, with reason "forced".`);
    });
  const unpin = () =>
    action.run(async () => {
      await api('DELETE', `/v1/experiments/${experiment.id}/overrides/${path}`);
      done(`The pin of ${unit} is removed; its stored assignment (if any) answers again.`);
    });
  const rebucket = () => {
    if (!confirm(`Re-bucket ${unit}? Its assignment is deleted and its exposures are marked superseded, so the analysis ignores them.`)) return;
    void action.run(async () => {
      await api('DELETE', `/v1/assignments/${experiment.id}/${path}`);
      done(`${unit} was re-bucketed: the next assign buckets it afresh.`);
    });
  };

  const variants = experiment.variants.map((v) => ({ value: v.key, label: v.key }));
  const disabled = action.busy || unit === '';
  return (
    <section aria-labelledby="units">
      <h2 id="units">Units (QA)</h2>
      <form class="unit-tools" onSubmit={look}>
        <Field label="Unit id" value={unitId} maxLength={256} onInput={(e) => setUnitId(e.currentTarget.value)} />
        <button type="submit" disabled={disabled}>
          Look up
        </button>
      </form>
      {lookup ? <p role="status">{describe(lookup)}</p> : null}
      {message ? <p role="status">{message}</p> : null}
      {experiment.status !== 'archived' ? (
        <PinControls variants={variants} variant={variant} onVariant={setVariant} disabled={disabled} onPin={pin} onUnpin={unpin} onRebucket={rebucket} />
      ) : null}
      <ErrorBox error={action.error} />
    </section>
  );
}
