// Planning in the admin UI: on a draft, the plan panel asks POST /v1/planning/power how long the
// experiment must run (metric, MDE, rule), draws power by day and says the answer in words; on
// the results page, the progress toward the planned sample from the snapshot's `planning` block.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import type * as Api from '../api-types.js';
import { ErrorBox, Field, Select } from '../components/ui.js';
import { integer, percent } from '../format.js';
import { useAction } from '../hooks.js';
import type { DecisionMethod, Experiment, Metric, Snapshot } from '../types.js';

type Plan = Api.PlanExperimentPowerResponse;
type MetricPlan = Plan['metrics'][number];

const RULES: { value: DecisionMethod; label: string }[] = [
  { value: 'bayesian.posterior_threshold', label: 'Bayesian (chance of being best)' },
  { value: 'bayesian.always_valid_evalue', label: 'Always-valid Bayesian (e-value)' },
  { value: 'frequentist.sequential_msprt', label: 'Sequential test (mSPRT)' },
];

const WIDTH = 480;
const HEIGHT = 160;
const PAD = 28;

/** Power by day as a line, with the planned power as a dashed line and the day it is reached marked. */
export function PowerChart({ plan, power }: { plan: MetricPlan; power: number }) {
  const points = plan.power_by_day;
  if (points.length === 0) return null;
  const last = points[points.length - 1]?.day ?? 1;
  const x = (day: number) => PAD + ((day - 1) / Math.max(last - 1, 1)) * (WIDTH - 2 * PAD);
  const y = (value: number) => HEIGHT - PAD - value * (HEIGHT - 2 * PAD);
  const path = points.map((point) => `${x(point.day).toFixed(1)},${y(point.power).toFixed(1)}`).join(' ');
  const reached = plan.days_needed !== null && plan.days_needed <= last ? plan.days_needed : null;
  const label = `Power by day, from ${percent(points[0]?.power ?? 0, 0)} on day 1 to ${percent(points[points.length - 1]?.power ?? 0, 0)} on day ${last}`;
  return (
    <svg class="plan-chart" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} width={WIDTH} height={HEIGHT} role="img" aria-label={label} data-testid="plan-chart">
      <line x1={PAD} x2={WIDTH - PAD} y1={y(0)} y2={y(0)} stroke="#8c959f" />
      <line x1={PAD} x2={WIDTH - PAD} y1={y(power)} y2={y(power)} stroke="#8c959f" stroke-dasharray="4 3" />
      <text x={2} y={y(power) + 4} font-size={10}>
        {percent(power, 0)}
      </text>
      <text x={PAD} y={HEIGHT - 8} font-size={10}>
        day 1
      </text>
      <text x={WIDTH - PAD - 30} y={HEIGHT - 8} font-size={10}>
        day {last}
      </text>
      <polyline points={path} fill="none" stroke="#0969da" stroke-width={2} />
      {reached !== null ? <circle cx={x(reached)} cy={y(power)} r={4} fill="#1a7f37" data-testid="plan-reached" /> : null}
    </svg>
  );
}

function planRequest(experiment: Experiment, metricId: string, mdePercent: string, method: DecisionMethod) {
  return {
    environment_id: experiment.environment_id,
    variants: experiment.variants.map((variant) => ({ key: variant.key, weight: variant.weight, is_control: variant.is_control })),
    decision_rule: { ...experiment.decision_rule, method },
    metric_ids: [metricId],
    minimum_detectable_effect: Number(mdePercent) / 100,
    ...(experiment.variance_reduction ? { variance_reduction: experiment.variance_reduction } : {}),
  };
}

/** The plan panel of a draft: how long it must run to detect the MDE, from the metric's history. */
export function PlanPanel({ experiment, metrics }: { experiment: Experiment; metrics: Metric[] }) {
  const [metricId, setMetricId] = useState(experiment.primary_metric_id ?? metrics[0]?.id ?? '');
  const [mde, setMde] = useState(String(+(experiment.decision_rule.minimum_detectable_effect * 100).toPrecision(4)));
  const [method, setMethod] = useState<DecisionMethod>(experiment.decision_rule.method);
  const [plan, setPlan] = useState<Plan | null>(null);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => setPlan(await api<Plan>('POST', '/v1/planning/power', planRequest(experiment, metricId, mde, method))));
  };
  const metric = plan?.metrics[0];
  return (
    <form class="card" onSubmit={submit} aria-labelledby="plan-title" data-testid="plan-panel">
      <h2 id="plan-title">Plan: how long must it run?</h2>
      <p class="muted">From the metric’s last 14 days in this environment: its mean and variance, and the new units a day.</p>
      <Select
        label="Metric"
        value={metricId}
        onChange={(event) => setMetricId(event.currentTarget.value)}
        options={metrics.map((item) => ({ value: item.id, label: item.name }))}
      />
      <Field label="Lift to detect (%)" type="number" min="0.01" step="any" value={mde} onInput={(event) => setMde(event.currentTarget.value)} />
      <Select label="Decision rule" value={method} onChange={(event) => setMethod(event.currentTarget.value as DecisionMethod)} options={RULES} />
      <ErrorBox error={action.error} />
      <button type="submit" disabled={action.busy || !metricId}>
        Plan
      </button>
      {plan && metric ? (
        <div class="plan-answer">
          <p class="lead" data-testid="plan-summary">
            {plan.summary}
          </p>
          <p class="muted">
            Baseline{' '}
            {metric.baseline.source === 'history' ? `from ${integer(metric.baseline.units)} units and ${integer(metric.baseline.events)} events` : 'given'}:
            mean {+metric.baseline.mean.toPrecision(4)}, variance {+metric.baseline.variance.toPrecision(4)}.
          </p>
          <PowerChart plan={metric} power={plan.power} />
        </div>
      ) : null}
    </form>
  );
}

/** Progress toward the planned sample on the results page, from the latest snapshot's planning block. */
export function PlanProgress({ snapshot, experiment }: { snapshot: Snapshot; experiment: Experiment }) {
  const planning = snapshot.planning;
  if (!planning) return null;
  const planned = experiment.decision_rule.min_sample_per_variant;
  const weighted = snapshot.traffic.filter((variant) => variant.weight > 0);
  const smallest = weighted.length ? Math.min(...weighted.map((variant) => variant.exposed_units)) : 0;
  const share = Math.min(1, planned > 0 ? smallest / planned : 0);
  const remaining =
    planning.days_remaining === null
      ? 'unknown until traffic arrives'
      : planning.days_remaining === 0
        ? 'reached'
        : `about ${integer(Math.ceil(planning.days_remaining))} more days`;
  return (
    <section class="card" aria-labelledby="progress-title" data-testid="plan-progress">
      <h2 id="progress-title">Progress toward the planned sample</h2>
      <progress max={1} value={share} aria-label={`${percent(share, 0)} of the planned sample`} />
      <p>
        {integer(smallest)} of {integer(planned)} units in the smallest variant ({percent(share, 0)}), at {integer(Math.round(planning.daily_units ?? 0))} units
        a day: <strong data-testid="plan-days-remaining">{remaining}</strong>.
      </p>
      {planning.mde_at_current_sample !== null ? (
        <p class="muted">
          Detectable now with 80% power: a {percent(planning.mde_at_current_sample, 1)} lift
          {planning.expected_days_to_mde === null
            ? '.'
            : planning.expected_days_to_mde === 0
              ? `; the planned ${percent(experiment.decision_rule.minimum_detectable_effect, 1)} is within reach.`
              : `; the planned ${percent(experiment.decision_rule.minimum_detectable_effect, 1)} in about ${integer(Math.ceil(planning.expected_days_to_mde))} more days.`}
        </p>
      ) : null}
    </section>
  );
}
