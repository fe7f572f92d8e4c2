// A holdout's own results: its metrics (chosen here), the latest snapshot's scorecard of the
// held-out units against the equal-size sample (the sample's lift is what everything launched
// added up to), the groups' sizes with the SRM check, and the launches on a timeline.
import { ApiError, api, type Page } from '../api.js';
import { readingOf } from '../charts/effect-chart.js';
import { LiftBar } from '../charts/lift-bar.js';
import { padded } from '../charts/scale.js';
import { Checkbox, ErrorBox, FormCard, Loading, Table } from '../components/ui.js';
import { chance, dateTime, integer, metricFormat, pValue, type MetricKind } from '../format.js';
import { useAction, useResource } from '../hooks.js';
import { Link } from '../router.js';
import type { Holdout, HoldoutSnapshot, Metric } from '../types.js';
import { liftOf, liftText } from './results-scorecard.js';
import { useState } from 'preact/hooks';

type SnapshotMetric = HoldoutSnapshot['metrics'][number];

function MetricChooser({ holdout: h, onChanged }: { holdout: Holdout; onChanged: () => void }) {
  const metrics = useResource(() => api<Page<Metric>>('GET', '/v1/metrics?limit=200'), []);
  const [chosen, setChosen] = useState<string[]>(h.metric_ids);
  if (!metrics.data) return <ErrorBox error={metrics.error} />;
  const toggle = (id: string, on: boolean) => setChosen((ids) => (on ? [...ids, id] : ids.filter((other) => other !== id)));
  const save = async () => {
    await api('PATCH', `/v1/holdouts/${h.id}`, { metric_ids: chosen });
    onChanged();
  };
  return (
    <FormCard id="holdout-metrics" title="Metrics the holdout measures" submitLabel="Save metrics" onSubmit={save} primary={false}>
      <p class="hint">Each metric counts a unit’s events over its window from the unit’s first contact; a window longer than the holdout has run is refused.</p>
      {metrics.data.data.map((metric) => (
        <Checkbox key={metric.id} label={metric.name} checked={chosen.includes(metric.id)} onChange={(on) => toggle(metric.id, on)} />
      ))}
    </FormCard>
  );
}

function LiftCellView({ metric }: { metric: SnapshotMetric }) {
  const cell = liftOf(metric.cumulative_lift);
  if (!cell) return <td class="muted">not enough units yet</td>;
  const format = metricFormat({ kind: metric.kind as MetricKind, unit: metric.unit, reference: metric.per_group[0]?.observed_rate });
  const text = liftText(cell, { format });
  const reading = readingOf(cell, metric.higher_is_better);
  return (
    <td class={`score score-${reading}`} data-testid={`holdout-lift-${metric.key}`} data-reading={reading}>
      <div class="score-line">
        <strong>{text.mean}</strong> <span class="muted">({text.interval})</span>
      </div>
      <LiftBar
        mean={cell.mean}
        low={cell.low}
        high={cell.high}
        domain={padded([cell.low, cell.high, 0])}
        higherIsBetter={metric.higher_is_better}
        label={`cumulative lift on ${metric.name}: ${text.mean}, 95% interval ${text.interval}`}
      />
      <div class="hint">chance the launches helped {chance(cell.chance)}</div>
    </td>
  );
}

function HoldoutScorecard({ snapshot }: { snapshot: HoldoutSnapshot }) {
  if (snapshot.metrics.length === 0) return <p class="muted">The holdout has no metrics: choose some to measure what its launches added up to.</p>;
  return (
    <Table caption="Holdout scorecard" columns={['Metric', 'Held out', 'Sample (everyone else)', 'Cumulative lift']}>
      {snapshot.metrics.map((metric) => {
        const format = metricFormat({ kind: metric.kind as MetricKind, unit: metric.unit, reference: metric.per_group[0]?.observed_rate });
        return (
          <tr key={metric.id} data-testid={`holdout-metric-${metric.key}`}>
            <th scope="row">{metric.name}</th>
            {metric.per_group.map((group) => (
              <td key={group.variant_key}>{format.value(group.observed_rate)}</td>
            ))}
            <LiftCellView metric={metric} />
          </tr>
        );
      })}
    </Table>
  );
}

/** The holdout's run as a line, with each launch placed at its date. */
function LaunchTimeline({ snapshot }: { snapshot: HoldoutSnapshot }) {
  const from = Date.parse(snapshot.period.from);
  const to = Date.parse(snapshot.period.to);
  const at = (iso: string) => (to > from ? Math.min(100, Math.max(0, ((Date.parse(iso) - from) / (to - from)) * 100)) : 0);
  return (
    <figure class="launch-timeline" data-testid="launch-timeline">
      <svg
        viewBox="0 0 100 12"
        preserveAspectRatio="none"
        width="100%"
        height="24"
        role="img"
        aria-label={`${snapshot.launches.length} launches while the holdout ran`}
      >
        <line x1={0} x2={100} y1={6} y2={6} stroke="#57606a" stroke-width={0.6} />
        {snapshot.launches.map((launch) => (
          <rect key={launch.experiment_id} x={at(launch.launched_at) - 0.4} y={1} width={0.8} height={10} fill="#1a7f37" />
        ))}
      </svg>
      <figcaption>
        <ol>
          {snapshot.launches.map((launch) => (
            <li key={launch.experiment_id} data-testid="timeline-launch">
              {dateTime(launch.launched_at)}: <Link href={`/experiments/${launch.experiment_id}`}>{launch.experiment_key}</Link> launched {launch.variant_key}
            </li>
          ))}
        </ol>
        {snapshot.launches.length === 0 ? <p class="muted">Nothing launched in the covered experiments while the holdout ran.</p> : null}
      </figcaption>
    </figure>
  );
}

async function latest(id: string): Promise<HoldoutSnapshot | null> {
  try {
    return await api<HoldoutSnapshot>('GET', `/v1/holdouts/${id}/results`);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

export function HoldoutResults({ holdout: h, onChanged }: { holdout: Holdout; onChanged: () => void }) {
  const snapshot = useResource(() => latest(h.id), [h.id]);
  const compute = useAction();
  const run = () =>
    void compute.run(async () => {
      await api('POST', `/v1/holdouts/${h.id}/results/compute`);
      snapshot.reload();
    });
  const s = snapshot.data;
  const [heldOut, sample] = s?.groups ?? [];
  return (
    <>
      {h.status !== 'archived' ? <MetricChooser key={h.updated_at} holdout={h} onChanged={onChanged} /> : null}
      <section class="card" aria-labelledby="holdout-results-title" data-testid="holdout-results">
        <h2 id="holdout-results-title">What the launches added up to</h2>
        <p class="muted">
          The held-out units (the status quo) against an equal-size random sample of everyone else the covered experiments saw, each unit counted from its first
          contact.
        </p>
        {h.status !== 'draft' ? (
          <button type="button" disabled={compute.busy} onClick={run}>
            Compute results now
          </button>
        ) : null}
        <ErrorBox error={compute.error ?? snapshot.error} />
        {snapshot.loading && !s ? <Loading /> : null}
        {!snapshot.loading && s === null ? <p class="muted">No results yet.</p> : null}
        {s ? (
          <>
            <p data-testid="holdout-groups">
              Computed {dateTime(s.computed_at)} · held out {integer(heldOut?.units)} units · sample {integer(sample?.units)} units · SRM{' '}
              {pValue(s.srm_chi_squared_p)}
              {s.srm_warning ? <strong class="error"> sample ratio mismatch: check how units reach the covered experiments</strong> : null}
            </p>
            <HoldoutScorecard snapshot={s} />
            <h3>Launches while it ran</h3>
            <LaunchTimeline snapshot={s} />
          </>
        ) : null}
      </section>
    </>
  );
}
