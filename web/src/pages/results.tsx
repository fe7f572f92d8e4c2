import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, type Page } from '../api.js';
import { HistoryChart } from '../charts/history-chart.js';
import { ErrorBox, Loading, PageTitle, StatusBadge } from '../components/ui.js';
import { SharePanel } from './share-panel.js';
import { dateTime, lift } from '../format.js';
import { useAction, useResource } from '../hooks.js';
import { Link } from '../router.js';
import type { ApiKey, Experiment, Metric, Snapshot } from '../types.js';
import { Breakdowns, srmSlices, SrmSliceWarning, type SliceNamer } from './results-breakdowns.js';
import { DecisionHeader } from './results-header.js';
import { HealthChecks } from './results-health.js';
import { historyThrough, liftHistory, loadHistory, type LiftHistory } from './results-history.js';
import { metricViews } from './results-model.js';
import { MetricDetails } from './results-parts.js';
import { Scorecard } from './results-scorecard.js';
import { WeightsOverTime } from './allocation.js';
import { PlanProgress } from './plan-panel.js';

interface ResultsData {
  experiment: Experiment;
  latest: Snapshot | null;
  history: LiftHistory;
  metrics: Metric[];
  keys: ApiKey[];
}

/**
 * One read of each, once per page open (and after "Compute now"): a results read through the
 * session is a peek, logged in the audit history and counted by the next snapshot. The history
 * and the catalogues are not peeks.
 */
async function loadResults(id: string): Promise<ResultsData> {
  const [experiment, latest, history, metrics, keys] = await Promise.all([
    api<Experiment>('GET', `/v1/experiments/${id}`),
    api<Snapshot>('GET', `/v1/experiments/${id}/results`).catch((error: unknown) => {
      if (error instanceof ApiError && error.status === 404) return null;
      throw error;
    }),
    loadHistory(id),
    api<Page<Metric>>('GET', '/v1/metrics?limit=200'),
    api<Page<ApiKey>>('GET', '/v1/api-keys?limit=200&include_revoked=true').catch(() => ({ data: [] as ApiKey[], next_cursor: null })),
  ]);
  return { experiment, latest, history: await historyThrough(id, history, latest), metrics: metrics.data, keys: keys.data };
}

/** Source slices are API key ids: shown by the key's name (from the snapshot, else the key list). */
function sliceNamer(keys: ApiKey[]): SliceNamer {
  const names = new Map(keys.map((key) => [key.id, key.name]));
  return (dimension, value) => {
    if (dimension !== 'source') return value.label || value.value;
    return value.label || names.get(value.value) || 'an unknown API key';
  };
}

/** Switches the breakdown to a slice's dimension, then brings its row into view. */
function useSliceFocus(): { dimension: string | null; setDimension: (d: string) => void; showSlice: (dimension: string, id: string) => void } {
  const [dimension, setDimension] = useState<string | null>(null);
  const [pending, setPending] = useState<string | null>(null);
  useEffect(() => {
    if (!pending) return;
    const row = document.getElementById(pending);
    row?.scrollIntoView({ block: 'center' });
    row?.focus();
    setPending(null);
  }, [pending, dimension]);
  return {
    dimension,
    setDimension,
    showSlice: (next, id) => {
      setDimension(next);
      setPending(id);
    },
  };
}

function SnapshotReport({ data, onChanged }: { data: ResultsData; onChanged: () => void }) {
  const { experiment, history, metrics, keys } = data;
  const latest = data.latest as Snapshot;
  const focus = useSliceFocus();
  const views = metricViews(latest, metrics);
  const primary = views.find((view) => view.role === 'primary');
  const treatments = latest.per_variant.filter((v) => !v.is_control).map((v) => v.variant_key);
  const nameOf = sliceNamer(keys);
  const flagged = srmSlices(latest)[0];
  const series = liftHistory(history, latest);
  return (
    <>
      <p class="muted">
        Snapshot computed {dateTime(latest.computed_at)}
        {latest.trigger ? ` (${latest.trigger})` : ''}. Opening this page is logged as a peek.
      </p>
      <SrmSliceWarning snapshot={latest} onShowSlice={focus.showSlice} nameOf={nameOf} />
      <DecisionHeader
        experiment={experiment}
        snapshot={latest}
        recommendation={latest.decision.recommendation}
        primary={primary}
        metricKeys={views.map((view) => view.key)}
        srmSliceId={flagged?.id ?? null}
        onShowSlice={() => flagged && focus.showSlice(flagged.dimension, flagged.id)}
        onStopped={onChanged}
      />
      <section aria-labelledby="scorecard-title">
        <h2 id="scorecard-title">Scorecard</h2>
        <Scorecard metrics={views} treatments={treatments} correction={latest.multiple_testing} />
        {views.map((view) => (
          <MetricDetails key={view.id} metric={view} />
        ))}
      </section>
      <PlanProgress snapshot={latest} experiment={experiment} />
      {primary ? (
        <section aria-labelledby="history-title">
          <h2 id="history-title">Lift over time: {primary.name}</h2>
          <HistoryChart series={series.points} format={(value) => lift(value, 0)} count={series.count} />
        </section>
      ) : null}
      <Breakdowns snapshot={latest} metrics={views} nameOf={nameOf} dimension={focus.dimension} onDimension={focus.setDimension} />
      <HealthChecks snapshot={latest} />
    </>
  );
}

export function Results({ id }: { id: string }) {
  const data = useResource(() => loadResults(id), [id]);
  const compute = useAction();
  if (data.error) return <ErrorBox error={data.error} />;
  if (!data.data) return <Loading what="Loading results" />;
  const { experiment, latest } = data.data;
  const computeNow = () =>
    compute.run(async () => {
      await api('POST', `/v1/experiments/${id}/results/compute`);
      data.reload();
    });

  return (
    <>
      <PageTitle
        actions={
          <>
            <Link class="button" href={`/experiments/${experiment.id}`}>
              Experiment
            </Link>
            {experiment.started_at ? (
              <button type="button" onClick={computeNow} disabled={compute.busy}>
                {compute.busy ? 'Computing…' : 'Compute now'}
              </button>
            ) : null}
          </>
        }
      >
        Results: {experiment.name} <StatusBadge status={experiment.status} />
      </PageTitle>
      <ErrorBox error={compute.error} />
      {latest ? (
        <SnapshotReport data={data.data} onChanged={data.reload} />
      ) : (
        <p class="notice">
          No snapshot yet. The analysis runs every {experiment.decision_rule.snapshot_cadence_minutes} minutes while the experiment runs
          {experiment.started_at ? '; use “Compute now” to compute one at once.' : '; start the experiment first.'}
        </p>
      )}
      <WeightsOverTime experiment={experiment} />
      {latest ? <SharePanel experimentId={experiment.id} /> : null}
    </>
  );
}
