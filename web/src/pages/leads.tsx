import { useState } from 'preact/hooks';
import { api, query, type Page } from '../api.js';
import { ErrorBox, Field, FormCard, ListView, PageTitle, Table, TextArea, usePager } from '../components/ui.js';
import { dateTime, json } from '../format.js';
import { useAction, useFormFields, useResource } from '../hooks.js';
import type { Lead, TaskToolSettings } from '../types.js';

function LeadRow({ lead, onSaved }: { lead: Lead; onSaved: () => void }) {
  const [status, setStatus] = useState(lead.status);
  const action = useAction();
  const save = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await api('PATCH', `/v1/leads/${lead.id}`, { status });
      onSaved();
    });
  };
  return (
    <tr>
      <td>{lead.name}</td>
      <td>{lead.email ?? '—'}</td>
      <td>
        <form class="inline" onSubmit={save}>
          <label class="visually-hidden" for={`status-${lead.id}`}>
            Status of {lead.name}
          </label>
          <input id={`status-${lead.id}`} value={status} size={12} onInput={(e) => setStatus(e.currentTarget.value)} />
          <button type="submit" disabled={status === lead.status || action.busy}>
            Save
          </button>
        </form>
        <ErrorBox error={action.error} />
      </td>
      <td>{lead.task_tool_task_id ? <code>{lead.task_tool_task_id}</code> : <span class="muted">not linked</span>}</td>
      <td>{dateTime(lead.updated_at)}</td>
    </tr>
  );
}

function StatusMapping() {
  const settings = useResource(() => api<TaskToolSettings>('GET', '/v1/task-tool/settings'), []);
  const [text, setText] = useState<string | null>(null);
  const value = text ?? (settings.data ? json(settings.data.status_mapping) : '');
  const save = async () => {
    let mapping: unknown;
    try {
      mapping = JSON.parse(value);
    } catch {
      throw new Error('The mapping is not valid JSON.');
    }
    await api('PUT', '/v1/task-tool/settings', { status_mapping: mapping });
    setText(null);
    settings.reload();
  };
  return (
    <FormCard id="mapping-title" title="Task-tool status mapping" submitLabel="Save mapping" primary={false} ready={text !== null} onSubmit={save}>
      <p class="hint">
        Task-tool status names (compared case-insensitively) to lead statuses. Unmapped statuses leave the lead unchanged and are audit-logged.
      </p>
      <ErrorBox error={settings.error} />
      <TextArea label="Mapping (JSON object)" class="mono" rows={5} value={value} onInput={(e) => setText(e.currentTarget.value)} />
    </FormCard>
  );
}

export function Leads() {
  const [filter, setFilter] = useState('');
  const [applied, setApplied] = useState('');
  const { cursor, pager } = usePager([applied]);
  const list = useResource(() => api<Page<Lead>>('GET', `/v1/leads${query({ status: applied, cursor })}`), [applied, cursor]);
  const blank = { name: '', email: '', status: 'new', task_tool_task_id: '' };
  const { form, setForm, bind } = useFormFields(blank);
  const create = async () => {
    await api('POST', '/v1/leads', {
      name: form.name,
      email: form.email || null,
      status: form.status || undefined,
      task_tool_task_id: form.task_tool_task_id || null,
    });
    setForm(blank);
    list.reload();
  };
  return (
    <>
      <PageTitle>Leads</PageTitle>
      <p class="muted">Local records whose status mirrors a task in the task-management tool.</p>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied(filter.trim());
        }}
      >
        <Field label="Status filter" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
        <button type="submit">Filter</button>
      </form>
      <ListView list={list} empty={<>No leads{applied ? ` with status ${applied}` : ''}.</>} pager={pager}>
        {(rows) => (
          <Table caption="Leads" columns={['Name', 'Email', 'Status', 'Task', 'Updated']}>
            {rows.map((lead) => (
              <LeadRow key={`${lead.id}${lead.updated_at}`} lead={lead} onSaved={list.reload} />
            ))}
          </Table>
        )}
      </ListView>
      <FormCard id="new-lead" title="New lead" submitLabel="Create lead" onSubmit={create}>
        <div class="row">
          <Field label="Name" required value={form.name} onInput={bind('name')} />
          <Field label="Email" type="email" value={form.email} onInput={bind('email')} />
          <Field label="Status" value={form.status} onInput={bind('status')} />
          <Field label="Task-tool task id" value={form.task_tool_task_id} onInput={bind('task_tool_task_id')} />
        </div>
      </FormCard>
      <StatusMapping />
    </>
  );
}
