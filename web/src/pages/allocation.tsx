import { timeLabel, variantColours } from '../charts/scale.js';
import { Checkbox, Field } from '../components/ui.js';
import { dateTime, percent } from '../format.js';
import type { Experiment } from '../types.js';
import { fromPercentText, toPercentText } from '../units.js';

// A bandit in the admin UI (docs/experiments.md "14. Bandits"): the allocation fields on the
// new-experiment form and the draft's editor, and the weights over time (its periods).

export type Allocation = Experiment['allocation'];
export type AllocationPeriod = Experiment['allocation_periods'][number];

/** The form's view of allocation: the toggle and each setting as typed, the floor and the stopping chance in %. */
export interface AllocationText {
  bandit: boolean;
  burn_in_hours: string;
  update_every_minutes: string;
  min_units_per_variant: string;
  weight_floor: string;
  stop_at_prob_best: string;
}

export const DEFAULT_ALLOCATION: AllocationText = {
  bandit: false,
  burn_in_hours: '24',
  update_every_minutes: '60',
  min_units_per_variant: '100',
  weight_floor: '1',
  stop_at_prob_best: '95',
};

export function allocationText(value: Allocation | undefined): AllocationText {
  if (!value || value.type !== 'bandit') return DEFAULT_ALLOCATION;
  return {
    bandit: true,
    burn_in_hours: String(value.burn_in_hours),
    update_every_minutes: String(value.update_every_minutes),
    min_units_per_variant: String(value.min_units_per_variant),
    weight_floor: toPercentText(value.weight_floor),
    stop_at_prob_best: toPercentText(value.stop_at_prob_best),
  };
}

/** The request's allocation; the server checks the numbers and names any that is wrong. */
export function allocationFromText(text: AllocationText) {
  if (!text.bandit) return { type: 'fixed' as const };
  return {
    type: 'bandit' as const,
    burn_in_hours: Number(text.burn_in_hours),
    update_every_minutes: Number(text.update_every_minutes),
    min_units_per_variant: Number(text.min_units_per_variant),
    weight_floor: fromPercentText(text.weight_floor),
    stop_at_prob_best: fromPercentText(text.stop_at_prob_best),
  };
}

export function describeAllocation(value: Allocation | undefined): string {
  if (!value || value.type !== 'bandit') return 'fixed weights';
  const floor = percent(value.weight_floor, value.weight_floor * 100 >= 1 ? 0 : 1);
  const winnerAt = percent(value.stop_at_prob_best, 0);
  return `bandit (Thompson sampling): ${value.burn_in_hours} h burn-in, an update every ${value.update_every_minutes} min once each variant has ${value.min_units_per_variant} units, at least ${floor} of new units for every variant, a winner once a variant has a ${winnerAt} chance of being best. Its results are weighed period by period and decided by that stopping rule (not an always-valid one), not by the decision rule.`;
}

/** The bandit toggle and its settings, shared by the new-experiment form and the editor. */
export function AllocationFields({
  value,
  onValue,
  errorAt,
}: {
  value: AllocationText;
  onValue: (next: AllocationText) => void;
  /** The server's problem with a field, by its pointer. */
  errorAt?: (pointer: string) => string | null;
}) {
  const number = (field: keyof AllocationText, label: string, hint: string, step = '1') => (
    <Field
      label={label}
      error={errorAt?.(`/allocation/${field}`) ?? null}
      type="number"
      step={step}
      value={value[field] as string}
      onInput={(e) => onValue({ ...value, [field]: e.currentTarget.value })}
      hint={hint}
    />
  );
  return (
    <fieldset>
      <legend>Allocation</legend>
      <Checkbox label="Bandit: send more new units to the variants doing best" checked={value.bandit} onChange={(bandit) => onValue({ ...value, bandit })} />
      {value.bandit ? (
        <>
          {number('burn_in_hours', 'Burn-in (hours)', 'Hours at the starting weights before the first update.', 'any')}
          {number('update_every_minutes', 'Update every (minutes)', 'At least 15.')}
          {number('min_units_per_variant', 'Units per variant before updating', 'No update until every variant has this many units.')}
          {number('weight_floor', 'Weight floor (%)', 'Each variant keeps at least this share of new units, e.g. 1; below 100% / number of variants.', 'any')}
          {number('stop_at_prob_best', 'Winner at chance of being best (%)', 'The bandit’s stopping rule, e.g. 95 (not an always-valid test).', 'any')}
        </>
      ) : null}
    </fieldset>
  );
}

const WIDTH = 640;
const BAR = 22;

/**
 * A bandit's weights over time: one stacked bar per period (the share of new units each variant
 * got from the period's start), with the same numbers as a table for screen readers.
 */
/** The same colour per variant as the results page's other charts: the control grey, the treatments from the palette. */
function variantColourOf(experiment: Experiment): (key: string) => string {
  const colours = variantColours(experiment.variants.map((variant) => ({ variant_key: variant.key, is_control: variant.is_control })));
  return (key) => colours.get(key) ?? '#3b4a5a';
}

export function WeightsOverTime({ experiment }: { experiment: Experiment }) {
  const periods = experiment.allocation_periods;
  if (experiment.allocation?.type !== 'bandit' || periods.length === 0) return null;
  const keys = experiment.variants.map((variant) => variant.key);
  const colourOf = variantColourOf(experiment);
  const span = Date.parse(periods.at(-1)?.started_at ?? '') - Date.parse(periods[0]?.started_at ?? '');
  return (
    <figure class="weights-over-time">
      <figcaption>Weights over time: each row is a period, from its start, in percent of new units</figcaption>
      <svg width={WIDTH} height={periods.length * (BAR + 6)} role="img" aria-label="weights of each period">
        {periods.map((period, row) => {
          let x = 160;
          return (
            <g key={period.started_at}>
              <text x={0} y={row * (BAR + 6) + 16} font-size="12">
                {timeLabel(Date.parse(period.started_at), span)}
              </text>
              {keys.map((key) => {
                const width = ((period.weights[key] ?? 0) / 100) * (WIDTH - 170);
                const rect = <rect key={key} x={x} y={row * (BAR + 6)} width={width} height={BAR} fill={colourOf(key)} data-variant={key} />;
                x += width;
                return rect;
              })}
            </g>
          );
        })}
      </svg>
      <p class="muted">
        {keys.map((key) => (
          <span key={key} style={{ color: colourOf(key), marginRight: '1em' }}>
            ■ {key}
          </span>
        ))}
      </p>
      <table>
        <caption>Weights per period</caption>
        <thead>
          <tr>
            <th>Period start</th>
            {keys.map((key) => (
              <th key={key}>{key}</th>
            ))}
            <th>Seed</th>
          </tr>
        </thead>
        <tbody>
          {periods.map((period) => (
            <tr key={period.started_at}>
              <td>{dateTime(period.started_at)}</td>
              {keys.map((key) => (
                <td key={key}>{period.weights[key] ?? 0}%</td>
              ))}
              <td>{period.seed ?? 'start'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
