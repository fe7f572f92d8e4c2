import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Page } from '../api.js';
import { useAction, type Resource } from '../hooks.js';

let firstPage = true;

/**
 * The page title; focused after an in-app navigation so screen readers announce the new page
 * (on the first page of a load, focus stays at the top so Tab reaches the skip link first).
 */
export function PageTitle({ children, actions }: { children: ComponentChildren; actions?: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (firstPage) firstPage = false;
    else ref.current?.focus({ preventScroll: true });
  }, []);
  return (
    <div class="page-title">
      <h1 tabIndex={-1} ref={ref}>
        {children}
      </h1>
      {actions ? <div class="actions">{actions}</div> : null}
    </div>
  );
}

export function ErrorBox({ error }: { error: string | null | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p class="muted" role="status">
      {what}…
    </p>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status}`}>{status}</span>;
}

type InputProps = JSX.InputHTMLAttributes<HTMLInputElement> & { label: string; hint?: string; value?: string | number; error?: string | null };

let fieldSequence = 0;
function useFieldId(): string {
  const [id] = useState(() => `f${++fieldSequence}`);
  return id;
}

/**
 * A label, the control it names and an optional hint tied to the control with
 * aria-describedby: the frame every form control here shares.
 */
export function Labelled({
  label,
  hint,
  error,
  control,
}: {
  label: string;
  hint: string | undefined;
  /** The server's problem with this field (from its pointer), shown beside it. */
  error?: string | null | undefined;
  control: (id: string, describedBy: string | undefined) => ComponentChildren;
}) {
  const id = useFieldId();
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class={error ? 'field field-invalid' : 'field'}>
      <label for={id}>{label}</label>
      {control(id, described || undefined)}
      {error ? (
        <small id={`${id}-error`} class="field-error" role="alert">
          {error}
        </small>
      ) : null}
      {hint ? (
        <small id={`${id}-hint`} class="hint">
          {hint}
        </small>
      ) : null}
    </div>
  );
}

/** A labelled input. */
export function Field({ label, hint, error, ...input }: InputProps) {
  return (
    <Labelled
      label={label}
      hint={hint}
      error={error}
      control={(id, describedBy) => <input id={id} aria-describedby={describedBy} aria-invalid={error ? true : undefined} {...input} />}
    />
  );
}

type TextAreaProps = JSX.TextareaHTMLAttributes<HTMLTextAreaElement> & { label: string; hint?: string; value?: string; error?: string | null };

export function TextArea({ label, hint, error, ...area }: TextAreaProps) {
  return (
    <Labelled
      label={label}
      hint={hint}
      error={error}
      control={(id, describedBy) => <textarea id={id} aria-describedby={describedBy} aria-invalid={error ? true : undefined} {...area} />}
    />
  );
}

type SelectProps = JSX.SelectHTMLAttributes<HTMLSelectElement> & {
  label: string;
  hint?: string;
  value?: string;
  options: { value: string; label: string }[];
  error?: string | null;
};

export function Select({ label, hint, options, error, ...select }: SelectProps) {
  return (
    <Labelled
      label={label}
      hint={hint}
      error={error}
      control={(id, describedBy) => (
        <select id={id} aria-describedby={describedBy} aria-invalid={error ? true : undefined} {...select}>
          {options.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      )}
    />
  );
}

export function Checkbox({ label, checked, onChange }: { label: string; checked: boolean; onChange: (checked: boolean) => void }) {
  const id = useFieldId();
  return (
    <div class="check">
      <input id={id} type="checkbox" checked={checked} onChange={(e) => onChange(e.currentTarget.checked)} />
      <label for={id}>{label}</label>
    </div>
  );
}

/** A column heading; `{ hidden }` is read to screen readers only (an actions column, say). */
export type Column = string | { hidden: string };

/**
 * A labelled table that scrolls sideways on narrow screens instead of squeezing its columns:
 * `columns` become the header row, `children` the body rows.
 */
export function Table({ caption, columns, children }: { caption: string; columns: readonly Column[]; children: ComponentChildren }) {
  return (
    <div class="table-wrap" role="region" aria-label={caption} tabIndex={0}>
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th scope="col" key={typeof column === 'string' ? column : column.hidden}>
                {typeof column === 'string' ? column : <span class="visually-hidden">{column.hidden}</span>}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/**
 * Previous / next over the API's opaque cursors: the cursors of the pages already seen are kept
 * so "Previous" can go back.
 */
export function usePager(reset: unknown[]): { cursor: string | undefined; pager: (next: string | null | undefined) => JSX.Element } {
  const [stack, setStack] = useState<(string | undefined)[]>([undefined]);
  const key = JSON.stringify(reset);
  const [lastKey, setLastKey] = useState(key);
  if (key !== lastKey) {
    setLastKey(key);
    setStack([undefined]);
  }
  const cursor = stack[stack.length - 1];
  const pager = (next: string | null | undefined) => (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={stack.length <= 1} onClick={() => setStack(stack.slice(0, -1))}>
        ← Previous
      </button>
      <span class="muted">Page {stack.length}</span>
      <button type="button" disabled={!next} onClick={() => next && setStack([...stack, next])}>
        Next →
      </button>
    </nav>
  );
  return { cursor, pager };
}

/** Shows a secret that the API returns once, with a copy button and a plain warning. */
export function SecretOnce({ label, secret, onDone }: { label: string; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };
  return (
    <div class="secret" role="region" aria-label={label}>
      <p>
        <strong>{label}</strong> — shown only now: <strong>you will not see it again</strong>. Copy it and store it somewhere safe; the server keeps only a hash
        or an encrypted copy.
      </p>
      <code class="secret-value" data-testid="secret">
        {secret}
      </code>
      <div class="actions">
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" onClick={onDone}>
          I have stored it
        </button>
      </div>
    </div>
  );
}

/** Definition list rows: label, value. */
export function Facts({ items }: { items: [string, ComponentChildren][] }) {
  return (
    <dl class="facts">
      {items.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/**
 * A listed resource in its states: the error, loading, a "none yet" line, or the rows (drawn by
 * `children`, only when there are some), then the pager.
 */
export function ListView<T>({
  list,
  empty,
  pager,
  children,
}: {
  list: Resource<Page<T>>;
  empty: ComponentChildren;
  pager: (next: string | null | undefined) => JSX.Element;
  children: (rows: T[]) => ComponentChildren;
}) {
  return (
    <>
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? <Loading /> : null}
      {list.data && list.data.data.length === 0 ? <p class="muted">{empty}</p> : null}
      {list.data && list.data.data.length > 0 ? children(list.data.data) : null}
      {list.data ? pager(list.data.next_cursor) : null}
    </>
  );
}

interface FormCardProps {
  /** The heading's id, which labels the form. */
  id: string;
  title: string;
  submitLabel: string;
  /** Sends the form; an error it throws (the server's problem, or a mistake found first) shows in the card. */
  onSubmit: () => Promise<void>;
  /** False keeps the button off (nothing changed yet, say). */
  ready?: boolean;
  /** The heading's level: 2 for a card of the page, 3 for one under a section. */
  level?: 2 | 3;
  /** A primary button, for the form a page is mostly for (the create form of a list, say). */
  primary?: boolean;
  /** The form's submit state when its fields show the server's problems beside them (useSubmit); its own otherwise. */
  submit?: { busy: boolean; error: string | null; run: (work: () => Promise<void>) => Promise<boolean> };
  children: ComponentChildren;
}

/** One form in a card: heading, fields, the error of the last try, and the button, off while it runs. */
export function FormCard({ id, title, submitLabel, onSubmit, ready = true, level = 2, primary = true, submit: external, children }: FormCardProps) {
  const own = useAction();
  const action = external ?? own;
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(onSubmit);
  };
  const Heading = level === 2 ? 'h2' : 'h3';
  return (
    <form class="card" onSubmit={submit} aria-labelledby={id}>
      <Heading id={id}>{title}</Heading>
      {children}
      <ErrorBox error={action.error} />
      <button type="submit" class={primary ? 'primary' : undefined} disabled={!ready || action.busy}>
        {submitLabel}
      </button>
    </form>
  );
}
