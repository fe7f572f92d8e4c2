import type { AutoStop, DecisionMethod } from '../types.js';

export const AUTO_STOP_OFF: AutoStop = { on_recommendation: false, on_guardrail_regression: false, on_srm: false };

/** The rules whose error rate holds however often the analysis looks (docs/statistics.md section 7). */
const ALWAYS_VALID: ReadonlySet<DecisionMethod> = new Set(['bayesian.always_valid_evalue', 'frequentist.sequential_msprt']);

export const POSTERIOR_THRESHOLD_REASON =
  'Not with the posterior-threshold rule: an automatic stop looks at every snapshot, and under that continuous monitoring the rule declares a false winner ' +
  '5.7–11% of the time instead of about 1% (docs/statistics.md, section 7). Choose an always-valid rule (e-value or mSPRT) to stop on the recommendation.';

/** The switches as sent: a stop on the recommendation only under a rule that allows it (the server refuses it otherwise). */
export function autoStopFor(value: AutoStop, method: DecisionMethod): AutoStop {
  return ALWAYS_VALID.has(method) ? value : { ...value, on_recommendation: false };
}

/** "on a broken split, on a guardrail regression" or "off". */
export function describeAutoStop(value: AutoStop | undefined): string {
  if (!value) return 'off';
  const on = [
    value.on_recommendation ? 'on the recommendation (ship, roll back, no difference)' : '',
    value.on_guardrail_regression ? 'on a guardrail regression' : '',
    value.on_srm ? 'on a broken split (SRM)' : '',
  ].filter(Boolean);
  return on.length ? `stops automatically ${on.join(', ')}` : 'off';
}

const SWITCHES: { name: keyof AutoStop; label: string; hint: string }[] = [
  {
    name: 'on_recommendation',
    label: 'Stop on the recommendation',
    hint: 'Ship stops it as won, roll back as lost, no difference as inconclusive; only once every variant has the minimum sample.',
  },
  {
    name: 'on_guardrail_regression',
    label: 'Stop when a guardrail regresses',
    hint: 'Stops it as lost when the leading variant makes a guardrail metric worse (after the minimum sample).',
  },
  { name: 'on_srm', label: 'Stop when the split breaks (SRM)', hint: 'Stops it as a bug when the units per variant do not match the weights.' },
];

/** The three auto-stop switches; the recommendation's is off and says why under a posterior-threshold rule. */
export function AutoStopFields({
  value,
  onValue,
  method,
  error,
}: {
  value: AutoStop;
  onValue: (next: AutoStop) => void;
  method: DecisionMethod;
  error?: string | null;
}) {
  const allowed = ALWAYS_VALID.has(method);
  return (
    <fieldset data-testid="auto-stop">
      <legend>Auto-stop</legend>
      <p class="muted">
        A snapshot that meets a switched-on condition stops the experiment, audit-logged with that snapshot, and tells your webhook endpoints.
      </p>
      {SWITCHES.map((item) => {
        const blocked = item.name === 'on_recommendation' && !allowed;
        const id = `auto-stop-${item.name}`;
        return (
          <div class="check" key={item.name}>
            <input
              id={id}
              type="checkbox"
              role="switch"
              checked={blocked ? false : value[item.name]}
              disabled={blocked}
              aria-describedby={`${id}-hint`}
              onChange={(e) => onValue({ ...value, [item.name]: e.currentTarget.checked })}
            />
            <label for={id}>{item.label}</label>
            <small id={`${id}-hint`} class="hint switch-reason" data-testid={blocked ? 'auto-stop-blocked' : undefined}>
              {blocked ? POSTERIOR_THRESHOLD_REASON : item.hint}
            </small>
          </div>
        );
      })}
      {error ? (
        <p class="field-error" role="alert">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
