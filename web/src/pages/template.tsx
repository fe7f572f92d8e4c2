import { useState } from 'preact/hooks';
import { api, type Page } from '../api.js';
import { ErrorBox, Field, Loading, PageTitle, TextArea } from '../components/ui.js';
import { dateTime } from '../format.js';
import { useAction, useResource } from '../hooks.js';
import type { Template, TemplateVersion } from '../types.js';
import { navigate } from '../router.js';
import { FieldSchema, RenderForm } from './template-parts.js';

function DraftEditor({ template, onSaved }: { template: Template; onSaved: () => void }) {
  const [form, setForm] = useState({ name: template.name, body: template.body });
  const action = useAction();
  const dirty = form.name !== template.name || form.body !== template.body;
  const save = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await api('PATCH', `/v1/templates/${template.id}`, form);
      onSaved();
    });
  };
  const freeze = () =>
    action.run(async () => {
      await api('POST', `/v1/templates/${template.id}/versions`);
      onSaved();
    });
  return (
    <form class="card" onSubmit={save} aria-labelledby="draft-title">
      <h2 id="draft-title">Draft</h2>
      <Field label="Name" required value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
      <TextArea label="Body" class="mono" rows={12} value={form.body} onInput={(e) => setForm({ ...form, body: e.currentTarget.value })} />
      <ErrorBox error={action.error} />
      <div class="actions">
        <button type="submit" class="primary" disabled={!dirty || action.busy}>
          Save draft
        </button>
        <button type="button" disabled={dirty || action.busy} onClick={() => void freeze()} title={dirty ? 'Save the draft first' : undefined}>
          Freeze as next version
        </button>
      </div>
      <p class="hint">
        Freezing captures the saved body and its field schema as an immutable version ({template.latest_version ? `after ${template.latest_version}` : 'v1'}).
      </p>
    </form>
  );
}

/** Deleting hides the template; its frozen versions stay, so existing renders keep working. */
function DeleteTemplate({ template }: { template: Template }) {
  const action = useAction();
  const remove = () => {
    if (!confirm(`Delete "${template.name}"? It leaves the list and takes no new versions or renders; its frozen versions and past renders stay readable.`))
      return;
    void action.run(async () => {
      await api('DELETE', `/v1/templates/${template.id}`);
      navigate('/templates');
    });
  };
  return (
    <>
      <button type="button" class="danger" disabled={action.busy} onClick={remove}>
        Delete template
      </button>
      <ErrorBox error={action.error} />
    </>
  );
}

export function TemplateDetail({ id }: { id: string }) {
  const template = useResource(() => api<Template>('GET', `/v1/templates/${id}`), [id]);
  const versions = useResource(() => api<Page<TemplateVersion>>('GET', `/v1/templates/${id}/versions?limit=200`), [id]);
  const [shown, setShown] = useState<string | null>(null);
  if (template.error) return <ErrorBox error={template.error} />;
  if (!template.data) return <Loading />;
  const list = versions.data?.data ?? [];
  const selected = list.find((v) => v.label === shown) ?? list[list.length - 1];
  const reload = () => {
    template.reload();
    versions.reload();
  };

  return (
    <>
      <PageTitle actions={<DeleteTemplate template={template.data} />}>{template.data.name}</PageTitle>
      <DraftEditor key={template.data.updated_at} template={template.data} onSaved={reload} />
      <section aria-labelledby="versions-title">
        <h2 id="versions-title">Versions</h2>
        <ErrorBox error={versions.error} />
        {list.length === 0 ? <p class="muted">No version frozen yet.</p> : null}
        <div class="tabs" role="group" aria-label="Choose a version">
          {list.map((v) => (
            <button key={v.label} type="button" aria-pressed={selected?.label === v.label} onClick={() => setShown(v.label)}>
              {v.label}
            </button>
          ))}
        </div>
        {selected ? (
          <div class="card">
            <h3>
              {selected.label} <span class="muted">frozen {dateTime(selected.created_at)}</span>
            </h3>
            <h4>Merge fields</h4>
            <FieldSchema version={selected} />
            <h4>Body as frozen</h4>
            <pre class="code">{selected.body_snapshot}</pre>
          </div>
        ) : null}
      </section>
      <RenderForm key={list.length} templateId={id} versions={list} />
    </>
  );
}
