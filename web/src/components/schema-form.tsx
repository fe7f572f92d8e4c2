import { useState } from 'preact/hooks';
import type { FieldError } from '../api.js';
import { JsonView, useJsonText } from './json-view.js';
import { Checkbox, Field } from './ui.js';

// A form generated from a template version's fields_schema (JSON Schema of its merge data):
// an input per field, a fieldset per object, a list with add and remove per array; the server's
// 422 problems (pointers under /data) show beside the field they name. A JSON view edits the
// same value.

export type Schema = { type?: string | string[]; properties?: Record<string, Schema>; required?: string[]; items?: Schema; description?: string };

function typeOf(schema: Schema): string {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type) return type;
  return schema.properties ? 'object' : 'string';
}

/** Blank data that has every field of the schema, so the form has an input for each. */
export function blankData(schema: Schema): unknown {
  const type = typeOf(schema);
  if (type === 'object') return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([name, child]) => [name, blankData(child)]));
  if (type === 'array') return [];
  if (type === 'number' || type === 'integer') return 0;
  if (type === 'boolean') return false;
  return '';
}

interface ValueProps {
  schema: Schema;
  value: unknown;
  onValue: (next: unknown) => void;
  label: string;
  pointer: string;
  errors: FieldError[];
  required: boolean;
}

function errorAt(errors: FieldError[], pointer: string): string | null {
  const found = errors.filter((e) => e.pointer === pointer).map((e) => e.message);
  return found.length ? found.join('; ') : null;
}

function ArrayValue({ schema, value, onValue, label, pointer, errors }: ValueProps) {
  const items = Array.isArray(value) ? value : [];
  const itemSchema = schema.items ?? {};
  return (
    <fieldset class="schema-array">
      <legend>{label}</legend>
      {items.map((item, i) => (
        <div key={i} class="schema-item">
          <SchemaValue
            schema={itemSchema}
            value={item}
            onValue={(next) => onValue(items.map((old, j) => (j === i ? next : old)))}
            label={`${label} ${i + 1}`}
            pointer={`${pointer}/${i}`}
            errors={errors}
            required
          />
          <button type="button" onClick={() => onValue(items.filter((_old, j) => j !== i))} aria-label={`Remove ${label} ${i + 1}`}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onValue([...items, blankData(itemSchema)])}>
        Add {label}
      </button>
      {errorAt(errors, pointer) ? <p class="field-error">{errorAt(errors, pointer)}</p> : null}
    </fieldset>
  );
}

function SchemaValue(props: ValueProps) {
  const { schema, value, onValue, label, pointer, errors, required } = props;
  const type = typeOf(schema);
  const error = errorAt(errors, pointer);
  const shown = required ? label : `${label} (optional)`;
  if (type === 'object') {
    const record = value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
    return (
      <fieldset class="schema-object">
        <legend>{label}</legend>
        {Object.entries(schema.properties ?? {}).map(([name, child]) => (
          <SchemaValue
            key={name}
            schema={child}
            value={record[name]}
            onValue={(next) => onValue({ ...record, [name]: next })}
            label={name}
            pointer={`${pointer}/${name}`}
            errors={errors}
            required={(schema.required ?? []).includes(name)}
          />
        ))}
        {error ? <p class="field-error">{error}</p> : null}
      </fieldset>
    );
  }
  if (type === 'array') return <ArrayValue {...props} />;
  if (type === 'boolean') return <Checkbox label={shown} checked={value === true} onChange={onValue} />;
  if (type === 'number' || type === 'integer') {
    return (
      <Field
        label={shown}
        type="number"
        step={type === 'integer' ? 1 : 'any'}
        value={typeof value === 'number' ? value : ''}
        error={error}
        hint={schema.description}
        onInput={(e) => onValue(e.currentTarget.value === '' ? undefined : Number(e.currentTarget.value))}
      />
    );
  }
  return (
    <Field
      label={shown}
      value={typeof value === 'string' ? value : ''}
      error={error}
      hint={schema.description}
      onInput={(e) => onValue(e.currentTarget.value)}
    />
  );
}

/** "/data/items/0/title" as "items 1 › title": where a problem is, in the form's own words. */
function placeOf(pointer: string): string {
  const parts = pointer
    .replace(/^\/data\/?/, '')
    .split('/')
    .filter(Boolean)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  return parts.map((part) => (/^\d+$/.test(part) ? String(Number(part) + 1) : part)).join(' › ') || 'the merge data';
}

/** The server's problems while the JSON view is open, each named by its place (the form marks them beside the fields). */
function JsonProblems({ errors }: { errors: FieldError[] }) {
  const shown = errors.filter((error) => error.pointer?.startsWith('/data'));
  if (shown.length === 0) return null;
  return (
    <ul class="field-error" data-testid="merge-data-problems">
      {shown.map((error) => (
        <li key={`${error.pointer}-${error.message}`}>
          {placeOf(error.pointer ?? '')}: {error.message}
        </li>
      ))}
    </ul>
  );
}

/** The merge data's form, with a JSON view; `invalid` names a JSON mistake in that view. */
export function SchemaForm({
  schema,
  value,
  onValue,
  errors,
}: {
  schema: Schema;
  value: unknown;
  onValue: (next: unknown, invalid?: string) => void;
  errors: FieldError[];
}) {
  const [mode, setMode] = useState<'form' | 'json'>('form');
  const view = useJsonText<unknown>(value, onValue);
  const empty = Object.keys(schema.properties ?? {}).length === 0;
  const toggle = () => {
    if (mode === 'form') view.open();
    setMode(mode === 'form' ? 'json' : 'form');
  };
  return (
    <div class="schema-form" data-testid="schema-form">
      <div class="actions">
        <button type="button" disabled={mode === 'json' && Boolean(view.mistake)} onClick={toggle}>
          {mode === 'form' ? 'Edit as JSON' : 'Back to the form'}
        </button>
      </div>
      {mode === 'json' ? (
        <>
          <JsonView label="Merge data (JSON)" state={view} />
          <JsonProblems errors={errors} />
        </>
      ) : empty ? (
        <p class="muted">This version has no merge fields.</p>
      ) : (
        <SchemaValue schema={schema} value={value} onValue={(next) => onValue(next)} label="Merge data" pointer="/data" errors={errors} required />
      )}
    </div>
  );
}
