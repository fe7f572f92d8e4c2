import { IntervalChart, type IntervalRow } from '../charts/interval-chart.js';
import { Table } from '../components/ui.js';
import { number, percent, pValue } from '../format.js';
import type { Snapshot, VariantPosterior } from '../types.js';

export type Formatter = (value: number) => string;

export function formatterFor(kind: string | undefined): Formatter {
  return kind === 'binary' || kind === undefined ? (v) => percent(v, 2) : (v) => number(v, 4);
}

export function intervalRows(perVariant: VariantPosterior[]): IntervalRow[] {
  return perVariant.flatMap((v) => {
    const interval = v.posterior.credible_interval_95;
    if (!interval || v.posterior.mean === null) return [];
    return [{ label: v.variant_key, mean: v.posterior.mean, low: interval[0], high: interval[1], isControl: Boolean(v.is_control) }];
  });
}

/** Per variant: the numbers behind the chart. */
export function PosteriorTable({ caption, perVariant, format }: { caption: string; perVariant: VariantPosterior[]; format: Formatter }) {
  const fmt = (v: number | null | undefined) => (v === null || v === undefined ? '—' : format(v));
  return (
    <Table
      caption={caption}
      columns={['Variant', 'Units', 'Conversions', 'Observed rate', 'Posterior mean', '95% credible interval', 'Probability best', 'Expected loss']}
    >
      {perVariant.map((v) => (
        <tr key={v.variant_key}>
          <th scope="row">
            <code>{v.variant_key}</code>
            {v.is_control ? <span class="muted"> (control)</span> : null}
          </th>
          <td>{number(v.sample_size)}</td>
          <td>{number(v.conversions)}</td>
          <td>{fmt(v.observed_rate)}</td>
          <td>{fmt(v.posterior.mean)}</td>
          <td>{v.posterior.credible_interval_95 ? `${fmt(v.posterior.credible_interval_95[0])} – ${fmt(v.posterior.credible_interval_95[1])}` : '—'}</td>
          <td>{percent(v.prob_best, 1)}</td>
          <td>{fmt(v.expected_loss_if_stop_now)}</td>
        </tr>
      ))}
    </Table>
  );
}

export function MetricResults({ title, perVariant, format }: { title: string; perVariant: VariantPosterior[]; format: Formatter }) {
  return (
    <>
      <IntervalChart title={title} rows={intervalRows(perVariant)} format={format} />
      <PosteriorTable caption={title} perVariant={perVariant} format={format} />
    </>
  );
}

const verdictWords: Record<string, (variant: string | null) => string> = {
  keep_running: () => 'Keep running: no decision yet. Stopping now would mean acting on noise.',
  winner: (variant) => `Winner: ${variant ?? 'a variant'}. The decision rule is satisfied; you can stop the experiment and ship it.`,
  no_difference: () => 'No meaningful difference: the variants perform alike within the minimum detectable effect. Stop it as inconclusive.',
  max_duration_reached: () => 'The maximum duration passed without a winner. Stop the experiment, usually as inconclusive.',
};

/** The verdict in plain words, and what "decision rule satisfied" means here. */
export function DecisionPanel({ snapshot }: { snapshot: Snapshot }) {
  const decision = snapshot.decision;
  const words = decision ? (verdictWords[decision.verdict]?.(decision.variant_key) ?? decision.verdict) : null;
  return (
    <section class={`verdict verdict-${decision?.verdict ?? 'unknown'}`} aria-labelledby="verdict-title" data-testid="verdict">
      <h2 id="verdict-title">Verdict</h2>
      {words ? <p class="verdict-words">{words}</p> : null}
      {decision?.reason ? <p class="muted">Why: {decision.reason}</p> : null}
      <p>
        Decision rule satisfied: <strong>{snapshot.decision_rule_satisfied ? 'yes' : 'no'}</strong>.{' '}
        {snapshot.decision_rule_satisfied
          ? 'The rule found a winner with the confidence it asks for.'
          : 'The rule has not found a winner yet (or found none): keep collecting data or wait for the maximum duration.'}
      </p>
    </section>
  );
}

/** SRM, late events, weight changes and peeks: the things that make results less trustworthy. */
export function HealthChecks({ snapshot }: { snapshot: Snapshot }) {
  const late = snapshot.late_event_count ?? 0;
  const peeks = snapshot.peek_count_at_computation ?? 0;
  return (
    <section aria-labelledby="checks-title">
      <h2 id="checks-title">Data checks</h2>
      {snapshot.srm_warning ? (
        <div class="warning" role="alert" data-testid="srm-warning">
          <strong>Sample ratio mismatch.</strong> The split of units between variants does not match the weights (p = {pValue(snapshot.srm_chi_squared_p)} &lt;
          0.001). Something is dropping or duplicating units in one variant — distrust these results until the cause is found.
        </div>
      ) : null}
      <ul class="checks">
        <li>
          <strong>SRM p-value: {pValue(snapshot.srm_chi_squared_p)}</strong> —{' '}
          {snapshot.srm_warning ? 'below 0.001: mismatch.' : 'the observed split is consistent with the weights (a warning shows below 0.001).'}
        </li>
        <li>
          <strong>Late events: {number(late)}</strong> — events that arrived 7 to 30 days after they happened (for example from apps that were offline).{' '}
          {late > 0 ? 'They are counted, but earlier snapshots did not have them, so results may have shifted.' : 'None so far.'}
        </li>
        <li>
          <strong>Weights changed since start: {snapshot.weights_changed_since_start ? 'yes' : 'no'}</strong>
          {snapshot.weights_changed_since_start
            ? ' — units were split differently at different times; if behaviour changed over time, comparisons can be biased.'
            : ' — the traffic split is as it was at the start.'}
        </li>
        <li>
          <strong>Peeks before this snapshot: {number(peeks)}</strong> — each opening of results in this UI is logged. Checking often and stopping at the first
          good-looking result inflates false positives under the posterior-threshold rule; the always-valid rules stay valid however often you look.
        </li>
      </ul>
    </section>
  );
}
