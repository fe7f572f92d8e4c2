import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError, errorText, type FieldError } from './api.js';
import { plainMessage } from './validation-words.js';

export interface Resource<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

/**
 * Loads once per change of `deps` (and on reload()), never on a timer: the results page in
 * particular must read results once per page open, because every read through the UI is a peek.
 */
export function useResource<T>(load: () => Promise<T>, deps: unknown[]): Resource<T> {
  const [state, setState] = useState<{ data: T | undefined; error: string | null; loading: boolean }>({
    data: undefined,
    error: null,
    loading: true,
  });
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let live = true;
    setState((previous) => ({ ...previous, loading: true, error: null }));
    load().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error: unknown) => live && setState({ data: undefined, error: errorText(error), loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { ...state, reload };
}

/** Runs one mutation at a time and remembers its error for display. */
export function useAction(): { busy: boolean; error: string | null; run: (work: () => Promise<void>) => Promise<boolean>; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
      return true;
    } catch (caught) {
      setError(errorText(caught));
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(null) };
}

/** A form's text fields: `bind(name)` is the onInput of that field's input. */
export function useFormFields<T extends Record<string, string>>(
  blank: T,
): { form: T; setForm: (form: T) => void; bind: (name: keyof T) => (event: { currentTarget: { value: string } }) => void } {
  const [form, setForm] = useState(blank);
  const bind = (name: keyof T) => (event: { currentTarget: { value: string } }) => {
    const value = event.currentTarget.value;
    setForm((current) => ({ ...current, [name]: value }));
  };
  return { form, setForm, bind };
}

/**
 * Sends a form and keeps the server's 422 problems by pointer, so each shows beside its field
 * (`errorAt('/key')`); the summary under the form names the problem without repeating pointers.
 */
/** The field a pointer names, for the summary under a form: "/data/items/0/title" -> "title". */
function fieldNameOf(pointer: string): string {
  const named = pointer
    .split('/')
    .filter((part) => part && !/^\d+$/.test(part))
    .pop();
  return (named ?? '').replace(/~1/g, '/').replace(/~0/g, '~').replace(/_/g, ' ');
}

export function useSubmit(): {
  busy: boolean;
  error: string | null;
  errors: FieldError[];
  errorAt: (pointer: string) => string | null;
  run: (work: () => Promise<void>) => Promise<boolean>;
} {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [errors, setErrors] = useState<FieldError[]>([]);
  const run = useCallback(async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    setErrors([]);
    try {
      await work();
      return true;
    } catch (caught) {
      const fields =
        caught instanceof ApiError
          ? (caught.problem.errors ?? []).filter((e) => e.pointer).map((e) => ({ ...e, message: plainMessage(e.message, e.pointer) }))
          : [];
      setErrors(fields);
      setError(
        fields.length > 0 && caught instanceof ApiError
          ? `${caught.problem.title} (marked beside the fields): ${fields.map((e) => `${fieldNameOf(e.pointer ?? '')} ${e.message}`.trim()).join('; ')}`
          : errorText(caught),
      );
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  const errorAt = (pointer: string) => {
    const found = errors.filter((e) => e.pointer === pointer).map((e) => e.message);
    return found.length > 0 ? found.join('; ') : null;
  };
  return { busy, error, errors, errorAt, run };
}
