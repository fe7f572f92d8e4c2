import { useState } from 'preact/hooks';
import { api, query, type Page } from '../api.js';
import { ErrorBox, Field, ListView, PageTitle, Select, Table, TextArea, usePager } from '../components/ui.js';
import { percent } from '../format.js';
import { useAction, useResource, useSubmit } from '../hooks.js';
import { Link } from '../router.js';
import type { Experiment, ExperimentTemplate, Metric } from '../types.js';

/** What a template sets, in words: unit type, variants, metrics by name, threshold, allocation, tags. */
function describeTemplate(template: ExperimentTemplate, metricName: (id: string) => string): string[] {
  const parts: string[] = [];
  if (template.unit_type) parts.push(`unit: ${template.unit_type}`);
  if (template.variants) parts.push(`variants: ${template.variants.map((v) => `${v.key} ${v.weight}%`).join(', ')}`);
  if (template.primary_metric_id) parts.push(`primary metric: ${metricName(template.primary_metric_id)}`);
  if (template.guardrail_metric_ids?.length) parts.push(`guardrails: ${template.guardrail_metric_ids.map(metricName).join(', ')}`);
  if (template.secondary_metric_ids?.length) parts.push(`secondary: ${template.secondary_metric_ids.map(metricName).join(', ')}`);
  if (template.decision_rule?.posterior_threshold !== undefined)
    parts.push(`ship at ${percent(template.decision_rule.posterior_threshold, 1)} chance to beat control`);
  if (template.allocation?.type === 'bandit') parts.push('bandit allocation');
  return parts;
}

function DeleteTemplate({ template, onDeleted }: { template: ExperimentTemplate; onDeleted: () => void }) {
  const action = useAction();
  const remove = () => {
    if (!confirm(`Delete the template "${template.name}"? Experiments made from it stay as they are.`)) return;
    void action.run(async () => {
      await api('DELETE', `/v1/experiment-templates/${template.id}`);
      onDeleted();
    });
  };
  return (
    <>
      <button type="button" class="danger" disabled={action.busy} onClick={remove} aria-label={`Delete the template ${template.name}`}>
        Delete
      </button>
      <ErrorBox error={action.error} />
    </>
  );
}

async function loadExperiments(): Promise<Experiment[]> {
  return (await api<Page<Experiment>>('GET', '/v1/experiments?limit=200&order=newest')).data.filter((e) => e.status !== 'archived');
}

/** Saves an experiment's definition (variants, metrics, rule, allocation, tags) as a template. */
function FromExperimentForm({ onCreated }: { onCreated: () => void }) {
  const experiments = useResource(loadExperiments, []);
  const submit = useSubmit();
  const [source, setSource] = useState('');
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const list = experiments.data ?? [];
  const chosen = source || list[0]?.id || '';
  const save = (event: Event) => {
    event.preventDefault();
    void submit.run(async () => {
      await api('POST', '/v1/experiment-templates', { name, description: description || null, from_experiment_id: chosen });
      setName('');
      setDescription('');
      onCreated();
    });
  };
  return (
    <form class="card" aria-labelledby="template-from-experiment" onSubmit={save}>
      <h2 id="template-from-experiment">Save an experiment as a template</h2>
      <ErrorBox error={experiments.error} />
      <Select
        label="Experiment"
        value={chosen}
        options={list.map((e) => ({ value: e.id, label: e.name }))}
        onChange={(e) => setSource(e.currentTarget.value)}
        hint="Its unit type, variants at their starting weights, metrics, decision rule, allocation, auto-stop, dimensions and tags; never its key, hypothesis or results."
      />
      <Field label="Template name" required value={name} onInput={(e) => setName(e.currentTarget.value)} error={submit.errorAt('/name')} />
      <TextArea label="Description" rows={2} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      <ErrorBox error={submit.error} />
      <button type="submit" class="primary" disabled={submit.busy || !chosen}>
        Save as template
      </button>
    </form>
  );
}

export function ExperimentTemplates() {
  const { cursor, pager } = usePager([]);
  const list = useResource(() => api<Page<ExperimentTemplate>>('GET', `/v1/experiment-templates${query({ cursor, limit: 50 })}`), [cursor]);
  const metrics = useResource(() => api<Page<Metric>>('GET', '/v1/metrics?limit=200'), []);
  const metricName = (id: string) => metrics.data?.data.find((m) => m.id === id)?.name ?? 'a deleted metric';
  return (
    <>
      <PageTitle
        actions={
          <Link class="button" href="/experiments">
            Experiments
          </Link>
        }
      >
        Experiment templates
      </PageTitle>
      <p class="muted">
        A template is a saved starting point for new experiments. Experiments made from one are copies: changing or deleting it changes none of them.
      </p>
      <ListView list={list} empty="No templates yet. Save an experiment as one below." pager={pager}>
        {(rows) => (
          <Table caption="Experiment templates" columns={['Name', 'What it sets', 'Tags', { hidden: 'Actions' }]}>
            {rows.map((template) => (
              <tr key={template.id} data-testid="template-row">
                <td>
                  {template.name}
                  {template.description ? <div class="hint">{template.description}</div> : null}
                </td>
                <td>
                  <ul class="plain">
                    {describeTemplate(template, metricName).map((part) => (
                      <li key={part}>{part}</li>
                    ))}
                  </ul>
                </td>
                <td>{template.tags?.length ? template.tags.join(', ') : <span class="muted">—</span>}</td>
                <td>
                  <Link class="button" href={`/experiments/new?template=${template.id}`} aria-label={`New experiment from ${template.name}`}>
                    New experiment from it
                  </Link>{' '}
                  <DeleteTemplate template={template} onDeleted={list.reload} />
                </td>
              </tr>
            ))}
          </Table>
        )}
      </ListView>
      <FromExperimentForm onCreated={list.reload} />
    </>
  );
}
