import { KEY_PATTERN } from '../patterns.js';
import { useState } from 'preact/hooks';
import { api, query, type Page } from '../api.js';
import { ErrorBox, Field, ListView, PageTitle, Table, usePager } from '../components/ui.js';
import { RuleBuilder, type SegmentChoice } from '../components/rule-builder.js';
import { dateTime, json } from '../format.js';
import { useAction, useFormFields, useResource, useSubmit } from '../hooks.js';
import { describeRule, type Rule } from '../rules.js';
import type { Segment } from '../types.js';

const blank = { key: '', name: '', description: '' };
const starter: Rule = { attribute: 'country', op: 'in', value: ['DE', 'AT'] };

function SegmentForm({ segments, onCreated }: { segments: SegmentChoice[]; onCreated: () => void }) {
  const { form, setForm, bind: set } = useFormFields(blank);
  const [rule, setRule] = useState<Rule | null>(starter);
  const [mistake, setMistake] = useState<string | undefined>();
  // A new builder after each created segment, so its JSON view starts from the fresh rule.
  const [generation, setGeneration] = useState(0);
  const submit = useSubmit();
  const create = (event: Event) => {
    event.preventDefault();
    void submit.run(async () => {
      if (mistake) throw new Error(`The rule is not valid JSON: ${mistake}`);
      await api('POST', '/v1/segments', { key: form.key, name: form.name, rule, ...(form.description ? { description: form.description } : {}) });
      setForm(blank);
      setRule(starter);
      setGeneration(generation + 1);
      onCreated();
    });
  };
  return (
    <form class="card" onSubmit={create} aria-labelledby="new-segment">
      <h2 id="new-segment">New segment</h2>
      <div class="row">
        <Field
          label="Key"
          required
          pattern={KEY_PATTERN}
          value={form.key}
          onInput={set('key')}
          error={submit.errorAt('/key')}
          hint="Lowercase letters, digits, dot, dash, underscore. Audiences refer to the segment by it."
        />
        <Field label="Name" required value={form.name} onInput={set('name')} error={submit.errorAt('/name')} />
        <Field label="Description" value={form.description} onInput={set('description')} error={submit.errorAt('/description')} />
      </div>
      <RuleBuilder
        key={generation}
        label="Rule"
        value={rule}
        onChange={(next, invalid) => {
          setRule(next);
          setMistake(invalid);
        }}
        segments={segments}
        errors={submit.errors}
        pointer="/rule"
      />
      <ErrorBox error={submit.error} />
      <button type="submit" class="primary" disabled={submit.busy}>
        Create segment
      </button>
    </form>
  );
}

function DeleteSegment({ segment, onDeleted }: { segment: Segment; onDeleted: () => void }) {
  const action = useAction();
  const remove = () => {
    if (!confirm(`Delete segment "${segment.key}"? Audiences that refer to it must drop it first.`)) return;
    void action.run(async () => {
      await api('DELETE', `/v1/segments/${segment.id}`);
      onDeleted();
    });
  };
  return (
    <>
      <button type="button" class="danger" disabled={action.busy} onClick={remove} aria-label={`Delete segment ${segment.key}`}>
        Delete
      </button>
      <ErrorBox error={action.error} />
    </>
  );
}

export function Segments() {
  const { cursor, pager } = usePager([]);
  const list = useResource(() => api<Page<Segment>>('GET', `/v1/segments${query({ cursor, limit: 200 })}`), [cursor]);
  return (
    <>
      <PageTitle>Segments</PageTitle>
      <ListView list={list} empty="No segments yet." pager={pager}>
        {(rows) => (
          <Table caption="Segments" columns={['Name', 'Key', 'Rule', 'Updated', { hidden: 'Actions' }]}>
            {rows.map((s) => (
              <tr key={s.id}>
                <td>
                  {s.name}
                  {s.description ? <div class="muted">{s.description}</div> : null}
                </td>
                <td>
                  <code>{s.key}</code>
                </td>
                <td>
                  <span data-testid="rule-words">{describeRule(s.rule as Rule | null, (key) => rows.find((r) => r.key === key)?.name ?? key)}</span>
                  <details>
                    <summary>JSON</summary>
                    <pre class="code">{json(s.rule)}</pre>
                  </details>
                </td>
                <td>{dateTime(s.updated_at)}</td>
                <td>
                  <DeleteSegment segment={s} onDeleted={list.reload} />
                </td>
              </tr>
            ))}
          </Table>
        )}
      </ListView>
      <SegmentForm segments={(list.data?.data ?? []).map((s) => ({ key: s.key, name: s.name }))} onCreated={list.reload} />
    </>
  );
}
