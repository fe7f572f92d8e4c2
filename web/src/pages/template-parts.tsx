import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { SchemaForm, type Schema } from '../components/schema-form.js';
import { Checkbox, ErrorBox, Select } from '../components/ui.js';
import { json } from '../format.js';
import { useSubmit } from '../hooks.js';
import type { Render, RenderFormat, TemplateVersion } from '../types.js';

interface FieldRow {
  path: string;
  type: string;
  required: boolean;
}

/** The merge fields of a frozen version, flattened to dotted paths, for people to read. */
export function fieldRows(schema: Schema, prefix = '', required = true): FieldRow[] {
  const rows: FieldRow[] = [];
  for (const [name, child] of Object.entries(schema.properties ?? {})) {
    const path = prefix ? `${prefix}.${name}` : name;
    const isRequired = required && (schema.required ?? []).includes(name);
    const type = Array.isArray(child.type) ? child.type.join(' | ') : (child.type ?? 'any');
    rows.push({ path, type, required: isRequired });
    if (child.properties) rows.push(...fieldRows(child, path, isRequired));
    if (child.items?.properties) rows.push(...fieldRows(child.items, `${path}[]`, isRequired));
  }
  return rows;
}

/** Sample merge data that satisfies the schema, so a first render works without typing it all. */
export function sampleData(schema: Schema): unknown {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (schema.properties || type === 'object') {
    return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([name, child]) => [name, sampleData(child)]));
  }
  if (type === 'array') return [sampleData(schema.items ?? {})];
  if (type === 'number' || type === 'integer') return 1;
  if (type === 'boolean') return true;
  return 'example';
}

export function FieldSchema({ version }: { version: TemplateVersion }) {
  const rows = fieldRows(version.fields_schema as Schema);
  return (
    <>
      {rows.length === 0 ? (
        <p class="muted">This version has no merge fields.</p>
      ) : (
        <ul class="fields">
          {rows.map((row) => (
            <li key={row.path}>
              <code>{row.path}</code> <span class="muted">{row.type}</span> {row.required ? <strong>required</strong> : <span class="muted">optional</span>}
            </li>
          ))}
        </ul>
      )}
      <details>
        <summary>Field schema as JSON Schema</summary>
        <pre class="code">{json(version.fields_schema)}</pre>
      </details>
    </>
  );
}

const FORMATS: RenderFormat[] = ['html', 'pdf', 'markdown', 'text'];
const EXTENSIONS: Record<RenderFormat, string> = { html: 'html', pdf: 'pdf', markdown: 'md', text: 'txt' };

/** Polls a render until it resolves or fails (renders are queued jobs; this is not a results read). */
function useRender(id: string | null): Render | null {
  const [render, setRender] = useState<Render | null>(null);
  useEffect(() => {
    if (!id) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let tries = 0;
    const poll = async () => {
      const next = await api<Render>('GET', `/v1/renders/${id}`);
      setRender(next);
      if ((next.status === 'queued' || next.status === 'running') && ++tries < 120) timer = setTimeout(() => void poll(), 500);
    };
    void poll();
    return () => clearTimeout(timer);
  }, [id]);
  return render;
}

/** The output a browser shows best, for the preview: HTML, else Markdown or text (a PDF is a download). */
const PREVIEWED: RenderFormat[] = ['html', 'markdown', 'text'];

/**
 * The rendered output itself, so a person sees what the merge data made. Sandboxed with no
 * permissions (and the server sends the HTML with a CSP sandbox): merge data is untrusted.
 */
function RenderPreview({ render }: { render: Render }) {
  const format = PREVIEWED.find((candidate) => render.outputs.some((output) => output.format === candidate));
  if (!format) return null;
  return <iframe class="render-preview" title={`Rendered ${format}`} sandbox="" src={`/v1/renders/${render.id}/outputs/${format}`} />;
}

function RenderStatus({ render }: { render: Render }) {
  return (
    <div role="status" class="render-status">
      <p>
        Render <code class="id">{render.id}</code> of {render.version}: <strong>{render.status}</strong>
        {render.error ? ` — ${render.error}` : ''}
      </p>
      {render.status === 'resolved' ? (
        <ul>
          {render.outputs.map((output) => (
            <li key={output.format}>
              <a href={`/v1/renders/${render.id}/outputs/${output.format}`} download={`render-${render.id}.${EXTENSIONS[output.format]}`}>
                Download {output.format}
              </a>{' '}
              <span class="muted">({output.bytes.toLocaleString('en-US')} bytes)</span>
            </li>
          ))}
        </ul>
      ) : null}
      {render.status === 'resolved' ? <RenderPreview render={render} /> : null}
    </div>
  );
}

function FormatChoice({ formats, onFormats }: { formats: RenderFormat[]; onFormats: (next: RenderFormat[]) => void }) {
  return (
    <fieldset>
      <legend>Formats</legend>
      {FORMATS.map((format) => (
        <Checkbox
          key={format}
          label={format}
          checked={formats.includes(format)}
          onChange={(on) => onFormats(on ? [...formats, format] : formats.filter((f) => f !== format))}
        />
      ))}
    </fieldset>
  );
}

export function RenderForm({ templateId, versions }: { templateId: string; versions: TemplateVersion[] }) {
  const latest = versions[versions.length - 1];
  const [label, setLabel] = useState(latest?.label ?? '');
  const version = versions.find((v) => v.label === label) ?? latest;
  const [data, setData] = useState<unknown>(() => (version ? sampleData(version.fields_schema as Schema) : {}));
  const [mistake, setMistake] = useState<string | undefined>();
  const [formats, setFormats] = useState<RenderFormat[]>(['html', 'pdf']);
  const [renderId, setRenderId] = useState<string | null>(null);
  const render = useRender(renderId);
  const action = useSubmit();

  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      if (mistake) throw new Error(`The merge data is not valid JSON: ${mistake}`);
      const created = await api<Render>('POST', '/v1/renders', { template_id: templateId, version: label, formats, data });
      setRenderId(created.id);
    });
  };
  if (!latest) return <p class="muted">Freeze a version first: renders always pin a frozen version.</p>;
  return (
    <form class="card" onSubmit={submit} aria-labelledby="render-title">
      <h2 id="render-title">Render</h2>
      <Select
        label="Version"
        value={label}
        options={[...versions].reverse().map((v) => ({ value: v.label, label: v.label }))}
        onChange={(e) => {
          setLabel(e.currentTarget.value);
          const chosen = versions.find((v) => v.label === e.currentTarget.value);
          if (chosen) setData(sampleData(chosen.fields_schema as Schema));
        }}
      />
      <FormatChoice formats={formats} onFormats={setFormats} />
      <SchemaForm
        key={version?.label}
        schema={(version?.fields_schema ?? {}) as Schema}
        value={data}
        onValue={(next, invalid) => {
          setData(next);
          setMistake(invalid);
        }}
        errors={action.errors}
      />
      <ErrorBox error={action.error} />
      <button type="submit" class="primary" disabled={action.busy || formats.length === 0}>
        Render
      </button>
      {render ? <RenderStatus render={render} /> : null}
    </form>
  );
}
