import { api, ApiError, type Page } from '../api.js';
import { HistoryChart } from '../charts/history-chart.js';
import { ErrorBox, Loading, PageTitle, StatusBadge } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useAction, useResource } from '../hooks.js';
import { Link } from '../router.js';
import type { Experiment, Metric, Snapshot, SnapshotHistory } from '../types.js';
import { DecisionPanel, formatterFor, HealthChecks, MetricResults } from './results-parts.js';
import { EffectSummary, GuardrailWarning } from './results-effects.js';
import { CupedNote } from './variance-reduction.js';
import { WeightsOverTime } from './allocation.js';
import { Breakdowns, SrmSliceWarning } from './results-breakdowns.js';

interface ResultsData {
  experiment: Experiment;
  latest: Snapshot | null;
  history: Snapshot[];
  metrics: Metric[];
}

/**
 * One read of each, once per page open (and after "Compute now"): a results read through the
 * session is a peek, logged in the audit history and counted by the next snapshot.
 */
async function loadResults(id: string): Promise<ResultsData> {
  const [experiment, latest, history, metrics] = await Promise.all([
    api<Experiment>('GET', `/v1/experiments/${id}`),
    api<Snapshot>('GET', `/v1/experiments/${id}/results`).catch((error: unknown) => {
      if (error instanceof ApiError && error.status === 404) return null;
      throw error;
    }),
    api<SnapshotHistory>('GET', `/v1/experiments/${id}/results/history?limit=200`).catch(() => ({ snapshots: [] as Snapshot[] })),
    api<Page<Metric>>('GET', '/v1/metrics?limit=200'),
  ]);
  return { experiment, latest, history: history.snapshots, metrics: metrics.data };
}

type Guardrail = NonNullable<Snapshot['guardrails']>[number];

function GuardrailSection({ guardrail, metrics }: { guardrail: Guardrail; metrics: Metric[] }) {
  const format = formatterFor(metrics.find((m) => m.id === guardrail.metric_id)?.kind);
  return (
    <section aria-label={`Guardrail ${guardrail.metric_key}`}>
      <h2>Guardrail: {guardrail.metric_key}</h2>
      {guardrail.cap_applied !== null && guardrail.cap_applied !== undefined ? (
        <p class="muted">Each unit’s value capped at {guardrail.cap_applied.toPrecision(6)}.</p>
      ) : null}
      <CupedNote cuped={guardrail.cuped} />
      <EffectSummary
        title={`Effect on ${guardrail.metric_key}`}
        perVariant={guardrail.per_variant}
        higherIsBetter={guardrail.higher_is_better !== false}
        format={format}
      />
      <MetricResults title={`Guardrail ${guardrail.metric_key}`} perVariant={guardrail.per_variant} format={format} />
    </section>
  );
}

/** Everything the latest snapshot says, primary metric first, then its health, breakdowns and guardrails. */
function SnapshotReport({ latest, history, metrics }: { latest: Snapshot; history: Snapshot[]; metrics: Metric[] }) {
  const format = formatterFor(latest.primary_metric?.kind);
  return (
    <>
      <p class="muted">
        Snapshot computed {dateTime(latest.computed_at)}
        {latest.trigger ? ` (${latest.trigger})` : ''}. Opening this page is logged as a peek.
      </p>
      <SrmSliceWarning snapshot={latest} />
      <section aria-labelledby="effect-title">
        <h2 id="effect-title">Effect against the control{latest.primary_metric ? `: ${latest.primary_metric.key}` : ''}</h2>
        {latest.primary_metric ? (
          <>
            <CupedNote cuped={latest.primary_metric.cuped} />
            <EffectSummary
              title={`Effect on ${latest.primary_metric.key}`}
              perVariant={latest.per_variant}
              higherIsBetter={latest.primary_metric.higher_is_better !== false}
              format={format}
            />
          </>
        ) : (
          <p class="muted">This experiment has no primary metric: only sample sizes and the SRM check are reported.</p>
        )}
      </section>
      <GuardrailWarning regressions={latest.decision?.guardrail_regressions ?? []} />
      <DecisionPanel snapshot={latest} />
      <section aria-labelledby="primary-title">
        <h2 id="primary-title">Primary metric per variant{latest.primary_metric ? `: ${latest.primary_metric.key}` : ''}</h2>
        <MetricResults title="Posterior mean and 95% credible interval per variant" perVariant={latest.per_variant} format={format} />
      </section>
      <section aria-labelledby="history-title">
        <h2 id="history-title">How the intervals tightened</h2>
        <HistoryChart snapshots={history.length ? history : [latest]} format={format} />
      </section>
      <HealthChecks snapshot={latest} />
      <Breakdowns snapshot={latest} format={format} />
      {(latest.guardrails ?? []).map((guardrail) => (
        <GuardrailSection key={guardrail.metric_id} guardrail={guardrail} metrics={metrics} />
      ))}
    </>
  );
}

export function Results({ id }: { id: string }) {
  const data = useResource(() => loadResults(id), [id]);
  const compute = useAction();
  if (data.error) return <ErrorBox error={data.error} />;
  if (!data.data) return <Loading what="Loading results" />;
  const { experiment, latest, history, metrics } = data.data;
  const computeNow = () =>
    compute.run(async () => {
      await api('POST', `/v1/experiments/${id}/results/compute`);
      data.reload();
    });

  return (
    <>
      <PageTitle
        actions={
          experiment.started_at ? (
            <button type="button" onClick={computeNow} disabled={compute.busy}>
              {compute.busy ? 'Computing…' : 'Compute now'}
            </button>
          ) : null
        }
      >
        Results: {experiment.name} <StatusBadge status={experiment.status} />
      </PageTitle>
      <p>
        <Link href={`/experiments/${experiment.id}`}>← Experiment definition{experiment.status === 'running' ? ' (stop it there)' : ''}</Link>
      </p>
      <ErrorBox error={compute.error} />
      <WeightsOverTime experiment={experiment} />
      {latest ? (
        <SnapshotReport latest={latest} history={history} metrics={metrics} />
      ) : (
        <p class="notice">
          No snapshot yet. The analysis runs every {experiment.decision_rule.snapshot_cadence_minutes} minutes while the experiment runs
          {experiment.started_at ? '; use “Compute now” to compute one at once.' : '; start the experiment first.'}
        </p>
      )}
    </>
  );
}
