import { api, query, type Page } from '../api.js';
import { ErrorBox, Field, FormCard, ListView, PageTitle, Table, TextArea, usePager } from '../components/ui.js';
import { dateTime, json } from '../format.js';
import { useAction, useFormFields, useResource } from '../hooks.js';
import type { Segment } from '../types.js';

const blank = { key: '', name: '', description: '', rule: '{"attribute": "country", "op": "in", "value": ["DE", "AT"]}' };

/** Parses the rule box; a JSON mistake is said in the form, not sent to the server. */
function parseRule(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`The rule is not valid JSON: ${(error as Error).message}`);
  }
}

function SegmentForm({ onCreated }: { onCreated: () => void }) {
  const { form, setForm, bind: set } = useFormFields(blank);
  const create = async () => {
    const rule = parseRule(form.rule);
    await api('POST', '/v1/segments', { key: form.key, name: form.name, rule, ...(form.description ? { description: form.description } : {}) });
    setForm(blank);
    onCreated();
  };
  return (
    <FormCard id="new-segment" title="New segment" submitLabel="Create segment" onSubmit={create}>
      <div class="row">
        <Field label="Key" required value={form.key} onInput={set('key')} hint='Audiences refer to it as {"segment": "key"}.' />
        <Field label="Name" required value={form.name} onInput={set('name')} />
        <Field label="Description" value={form.description} onInput={set('description')} />
      </div>
      <TextArea
        label="Rule (JSON)"
        class="mono"
        rows={4}
        value={form.rule}
        onInput={set('rule')}
        hint="The same rule language as experiment audiences (docs/assignment.md, section 3)."
      />
    </FormCard>
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
  const list = useResource(() => api<Page<Segment>>('GET', `/v1/segments${query({ cursor })}`), [cursor]);
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
                  <pre class="code">{json(s.rule)}</pre>
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
      <SegmentForm onCreated={list.reload} />
    </>
  );
}
