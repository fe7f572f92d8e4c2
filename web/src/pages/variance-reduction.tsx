import { Checkbox, Field } from '../components/ui.js';
import type { CupedReport, VarianceReduction } from '../types.js';

/** The form's view of variance_reduction: the toggle and the lookback as typed. */
export interface CupedText {
  enabled: boolean;
  lookback_days: string;
}

export const DEFAULT_CUPED: CupedText = { enabled: false, lookback_days: '14' };

export function cupedText(value: VarianceReduction): CupedText {
  return value ? { enabled: true, lookback_days: String(value.lookback_days) } : DEFAULT_CUPED;
}

export function cupedFromText(text: CupedText): VarianceReduction {
  return text.enabled ? { method: 'cuped', lookback_days: Number(text.lookback_days) } : null;
}

/** The CUPED toggle and lookback, shared by the new-experiment form and the editor. */
export function VarianceReductionFields({
  value,
  onValue,
  errorAt,
}: {
  value: CupedText;
  onValue: (next: CupedText) => void;
  /** The server's problem with a field, by its pointer. */
  errorAt?: (pointer: string) => string | null;
}) {
  return (
    <fieldset>
      <legend>Variance reduction</legend>
      <Checkbox
        label="Use CUPED (adjust for each unit’s behaviour before its exposure)"
        checked={value.enabled}
        onChange={(enabled) => onValue({ ...value, enabled })}
      />
      {value.enabled ? (
        <Field
          label="Lookback (days)"
          type="number"
          min={1}
          max={60}
          value={value.lookback_days}
          error={errorAt?.('/variance_reduction/lookback_days') ?? null}
          onInput={(e) => onValue({ ...value, lookback_days: e.currentTarget.value })}
          hint="1–60 days before each unit’s first exposure. Helps with returning users; does nothing for new ones."
        />
      ) : null}
    </fieldset>
  );
}

/** One line under a metric's results: CUPED on, and how much variance it removed (or why not). */
export function CupedNote({ cuped }: { cuped: CupedReport | null | undefined }) {
  if (!cuped) return null;
  if (!cuped.applied || cuped.variance_reduction === null) {
    return (
      <p class="muted">
        CUPED is on ({cuped.lookback_days}-day lookback) but not applied here: {cuped.note ?? 'no pre-period data'}.
      </p>
    );
  }
  // Interval widths scale with the standard deviation: removing a share r of the variance narrows them by 1 - sqrt(1 - r).
  const narrowing = 1 - Math.sqrt(Math.max(0, 1 - cuped.variance_reduction));
  const removed = `${(100 * cuped.variance_reduction).toFixed(1)}%`;
  const narrower = `${(100 * narrowing).toFixed(1)}%`;
  // One sentence per fact, in the UI's own words: the server's note repeats what the numbers say.
  return (
    <p class="muted cuped-note" title={cuped.theta === null ? undefined : `θ = ${cuped.theta.toPrecision(3)}`}>
      {narrowing >= 0.02
        ? `CUPED is on (${cuped.lookback_days}-day lookback): it removed ${removed} of the variance, so the intervals are ${narrower} narrower. Posteriors, effects and the decision use the adjusted values; the observed mean is unadjusted.`
        : `CUPED is on (${cuped.lookback_days}-day lookback): it removed ${removed} of the variance, no practical gain (the intervals are ${narrower} narrower): the units’ behaviour before exposure barely predicts this metric, as is typical of new users.`}
    </p>
  );
}
