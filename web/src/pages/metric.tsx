import type { ComponentChildren } from 'preact';
import { api, type Page } from '../api.js';
import { ErrorBox, Facts, Field, FormCard, Loading, PageTitle } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useAction, useFormFields, useResource } from '../hooks.js';
import { Link, navigate } from '../router.js';
import type { Metric } from '../types.js';
import { durationWords, fromDaysText, toDaysText } from '../units.js';
import { cappingOf, DirectionAndCapping, effectFieldsOf } from './metric-options.js';
import { readsText, useWarehouse } from './metric-source.js';
import { sequenceWords } from './metric-sequence.js';

const isSequence = (metric: Pick<Metric, 'kind'>) => metric.kind === 'funnel' || metric.kind === 'retention';

/** Name, description, direction, capping, path and window; key and kind are fixed. */
function MetricEditor({ metric, onSaved }: { metric: Metric; onSaved: () => void }) {
  const { form, bind } = useFormFields({
    name: metric.name,
    description: metric.description ?? '',
    property_path: metric.property_path ?? '',
    filter: metric.filter ?? '',
    unit: metric.unit ?? '',
    unit_dedup_window: toDaysText(metric.unit_dedup_window),
    ...effectFieldsOf(metric),
  });
  const save = async () => {
    const sequence = metric.kind === 'funnel' || metric.kind === 'retention';
    const readsEvents = metric.kind !== 'ratio' && !sequence;
    await api('PATCH', `/v1/metrics/${metric.id}`, {
      name: form.name,
      description: form.description || null,
      higher_is_better: form.higher_is_better === 'true',
      ...(metric.kind === 'binary' || sequence ? {} : { unit: form.unit || null }),
      ...(readsEvents ? { unit_dedup_window: fromDaysText(form.unit_dedup_window) } : {}),
      ...(readsEvents && metric.fact_table_id === null ? { property_path: form.property_path || null } : {}),
      ...(metric.fact_table_id === null ? {} : { filter: form.filter || null }),
      ...(metric.kind === 'binary' || metric.kind === 'ratio' || sequence ? {} : { capping: cappingOf(form) }),
    });
    onSaved();
  };
  return (
    <FormCard id="edit-metric" title="Edit metric" submitLabel="Save changes" onSubmit={save}>
      <p class="hint">Snapshots computed from now on use the new definition; earlier snapshots keep their numbers.</p>
      <div class="row">
        <Field label="Name" required value={form.name} onInput={bind('name')} />
        <Field label="Description" value={form.description} onInput={bind('description')} />
        {metric.kind === 'binary' || isSequence(metric) ? null : (
          <Field label="Unit" value={form.unit} maxLength={16} onInput={bind('unit')} hint="Shown beside the values, e.g. ms or USD." />
        )}
      </div>
      {metric.kind === 'ratio' || isSequence(metric) ? null : (
        <div class="row">
          <Field
            label="Per-unit window (days)"
            type="number"
            min={0}
            step="any"
            value={form.unit_dedup_window}
            onInput={bind('unit_dedup_window')}
            hint="Days after the unit’s first exposure that count, e.g. 7."
          />
          {metric.fact_table_id === null ? (
            <Field label="Property path" value={form.property_path} onInput={bind('property_path')} hint="For sum and mean." />
          ) : (
            <Field label="Row filter" value={form.filter} onInput={bind('filter')} hint="A SQL condition over the fact table’s columns (optional)." />
          )}
        </div>
      )}
      <DirectionAndCapping form={form} bind={bind} kind={metric.kind} />
    </FormCard>
  );
}

function DeleteMetric({ metric }: { metric: Metric }) {
  const action = useAction();
  const remove = () => {
    if (!confirm(`Delete metric "${metric.key}"? Draft and running experiments that use it must drop it first.`)) return;
    void action.run(async () => {
      await api('DELETE', `/v1/metrics/${metric.id}`);
      navigate('/metrics');
    });
  };
  return (
    <section class="card" aria-labelledby="delete-metric">
      <h2 id="delete-metric">Delete</h2>
      <p class="hint">Refused while a draft or running experiment, or a ratio metric, uses it. Stopped experiments keep their snapshots.</p>
      <ErrorBox error={action.error} />
      <button type="button" class="danger" disabled={action.busy} onClick={remove}>
        Delete metric
      </button>
    </section>
  );
}

/** A ratio metric's two metrics by name, linked; the names come from the workspace's metrics. */
function RatioParts({ metric }: { metric: Metric }) {
  const all = useResource(() => api<Page<Metric>>('GET', '/v1/metrics?limit=200'), []);
  const part = (id: string | null) => {
    const found = all.data?.data.find((m) => m.id === id);
    return found ? <Link href={`/metrics/${found.id}`}>{found.name}</Link> : all.loading ? '…' : 'a deleted metric';
  };
  return (
    <p data-testid="ratio-parts">
      The sum of {part(metric.numerator_metric_id)} over the sum of {part(metric.denominator_metric_id)}, per variant.
    </p>
  );
}

export function MetricDetail({ id }: { id: string }) {
  const metric = useResource(() => api<Metric>('GET', `/v1/metrics/${id}`), [id]);
  const warehouse = useWarehouse();
  if (metric.error) return <ErrorBox error={metric.error} />;
  if (!metric.data) return <Loading what="Loading the metric" />;
  const m = metric.data;
  return (
    <>
      <PageTitle>Metric: {m.name}</PageTitle>
      <p>
        <Link href="/metrics">← All metrics</Link>
      </p>
      <Facts
        items={[
          ['Key', <code>{m.key}</code>],
          ['Kind', m.kind],
          ...(isSequence(m)
            ? ([[m.kind === 'funnel' ? 'Steps' : 'Came back', <span data-testid="sequence-words">{sequenceWords(m)}</span>]] as [string, ComponentChildren][])
            : m.kind === 'ratio'
              ? []
              : ([
                  m.fact_table_id === null
                    ? ['Event', m.event_key ? <code>{m.event_key}</code> : '—']
                    : ['Reads', readsText(m, warehouse.tables, warehouse.sources)],
                  ['Aggregation', `${m.aggregation}${m.property_path ? ` of ${m.property_path}` : ''}${m.column ? ` of ${m.column}` : ''}`],
                  ['Per-unit window', durationWords(m.unit_dedup_window)],
                ] as [string, ComponentChildren][])),
          ['Unit', m.kind === 'binary' || isSequence(m) ? 'a rate (%)' : (m.unit ?? 'none')],
          ['Direction', m.higher_is_better ? 'higher is better' : 'lower is better'],
          ['Capping', m.capping ? `${m.capping.type} ${m.capping.value}` : 'none'],
          ['Updated', dateTime(m.updated_at)],
        ]}
      />
      {m.kind === 'ratio' ? <RatioParts metric={m} /> : null}
      <MetricEditor key={m.updated_at} metric={m} onSaved={metric.reload} />
      <DeleteMetric metric={m} />
    </>
  );
}
