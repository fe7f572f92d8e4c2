import { api, type Page } from '../api.js';
import { ErrorBox, Facts, Loading, PageTitle, StatusBadge, Table } from '../components/ui.js';
import { dateTime, json } from '../format.js';
import { useResource } from '../hooks.js';
import { Link } from '../router.js';
import type { Environment, Experiment, Metric, MutexGroup } from '../types.js';
import { describeRule, Lifecycle, PlanningWarnings, WeightsEditor } from './experiment-parts.js';
import { DecisionRuleEditor, DetailsEditor, MetricsEditor } from './experiment-edit.js';
import { VarianceReductionEditor } from './variance-reduction.js';
import { AllocationEditor, WeightsOverTime, describeAllocation } from './allocation.js';
import { UnitTools } from './experiment-units.js';

interface Catalogue {
  environments: Environment[];
  metrics: Metric[];
  groups: MutexGroup[];
}

async function loadCatalogue(): Promise<Catalogue> {
  const [environments, metrics, groups] = await Promise.all([
    api<Page<Environment>>('GET', '/v1/environments?limit=200'),
    api<Page<Metric>>('GET', '/v1/metrics?limit=200'),
    api<Page<MutexGroup>>('GET', '/v1/mutex-groups?limit=200'),
  ]);
  return { environments: environments.data, metrics: metrics.data, groups: groups.data };
}

function ExperimentFacts({ experiment: e, catalogue: cat }: { experiment: Experiment; catalogue: Catalogue | null | undefined }) {
  return (
    <Facts
      items={[
        ['Key', <code>{e.key}</code>],
        ['Unit', e.unit_type],
        ['Environment', cat?.environments.find((env) => env.id === e.environment_id)?.name ?? e.environment_id],
        ['Created', dateTime(e.created_at)],
        ['Started', dateTime(e.started_at)],
        ['Stopped', e.stopped_at ? `${dateTime(e.stopped_at)} (${e.stop_reason ?? 'no reason'})` : '—'],
        ...(e.outcome_notes ? ([['Outcome notes', e.outcome_notes]] as [string, string][]) : []),
        ['Mutex group', e.mutex_group_id ? (cat?.groups.find((g) => g.id === e.mutex_group_id)?.name ?? e.mutex_group_id) : 'none'],
      ]}
    />
  );
}

function VariantsSection({ experiment: e, onChanged }: { experiment: Experiment; onChanged: () => void }) {
  return (
    <section aria-labelledby="variants">
      <h2 id="variants">Variants and weights</h2>
      <Table caption="Variants" columns={['Variant', 'Weight', 'Control', 'Description']}>
        {e.variants.map((v) => (
          <tr key={v.id}>
            <td>
              <code>{v.key}</code>
            </td>
            <td>{v.weight}%</td>
            <td>{v.is_control ? 'yes' : ''}</td>
            <td>{v.description ?? ''}</td>
          </tr>
        ))}
      </Table>
      {e.weights_changed_since_start ? <p class="notice">Weights were changed after the start.</p> : null}
      <p>Allocation: {describeAllocation(e.allocation)}</p>
      <WeightsOverTime experiment={e} />
      {e.status === 'draft' ? <AllocationEditor key={`allocation-${e.updated_at}`} experiment={e} onChanged={onChanged} /> : null}
      {e.status === 'draft' || (e.status === 'running' && e.allocation?.type !== 'bandit') ? (
        <WeightsEditor key={e.variants.map((v) => v.weight).join()} experiment={e} onChanged={onChanged} />
      ) : null}
    </section>
  );
}

function MeasureSection({
  experiment: e,
  catalogue: cat,
  onChanged,
}: {
  experiment: Experiment;
  catalogue: Catalogue | null | undefined;
  onChanged: () => void;
}) {
  const metricName = (metricId: string) => cat?.metrics.find((m) => m.id === metricId)?.name ?? metricId;
  return (
    <section aria-labelledby="measure">
      <h2 id="measure">What it measures</h2>
      <Facts
        items={[
          ['Primary metric', e.primary_metric_id ? metricName(e.primary_metric_id) : 'none (results show sample sizes and SRM only)'],
          ['Guardrails', e.guardrail_metric_ids.length ? e.guardrail_metric_ids.map(metricName).join(', ') : 'none'],
          ['Decision rule', <span>{e.decision_rule.method}</span>],
          ['Variance reduction', e.variance_reduction ? `CUPED, ${e.variance_reduction.lookback_days}-day lookback` : 'off'],
        ]}
      />
      <p>{describeRule(e.decision_rule)}</p>
      <PlanningWarnings warnings={e.warnings ?? []} />
      {e.status === 'draft' && cat ? <MetricsEditor key={e.updated_at} experiment={e} metrics={cat.metrics} onChanged={onChanged} /> : null}
      {e.status === 'draft' || e.status === 'running' ? <DecisionRuleEditor key={e.updated_at} experiment={e} onChanged={onChanged} /> : null}
      {e.status === 'draft' || e.status === 'running' ? <VarianceReductionEditor key={`cuped-${e.updated_at}`} experiment={e} onChanged={onChanged} /> : null}
    </section>
  );
}

export function ExperimentDetail({ id }: { id: string }) {
  const experiment = useResource(() => api<Experiment>('GET', `/v1/experiments/${id}`), [id]);
  const catalogue = useResource(loadCatalogue, []);
  const e = experiment.data;
  if (experiment.error) return <ErrorBox error={experiment.error} />;
  if (!e) return <Loading />;
  const reload = () => experiment.reload();

  return (
    <>
      <PageTitle
        actions={
          e.started_at ? (
            <Link class="button primary" href={`/experiments/${e.id}/results`}>
              View results
            </Link>
          ) : null
        }
      >
        {e.name} <StatusBadge status={e.status} />
      </PageTitle>
      <p class="lead">{e.hypothesis}</p>
      <ExperimentFacts experiment={e} catalogue={catalogue.data} />
      <VariantsSection experiment={e} onChanged={reload} />
      <MeasureSection experiment={e} catalogue={catalogue.data} onChanged={reload} />
      <section aria-labelledby="audience">
        <h2 id="audience">Audience</h2>
        {e.audience ? <pre class="code">{json(e.audience)}</pre> : <p>Everyone (no audience filter).</p>}
        {e.status === 'draft' || e.status === 'running' ? <DetailsEditor key={e.updated_at} experiment={e} onChanged={reload} /> : null}
      </section>
      <UnitTools experiment={e} />
      <Lifecycle experiment={e} onChanged={reload} />
    </>
  );
}
