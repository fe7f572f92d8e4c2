import { useState } from 'preact/hooks';
import { json } from '../format.js';
import { TextArea } from './ui.js';

// The JSON view of a form for experts: the same value as text. A JSON mistake is named at once
// and handed on as `invalid`, so the form can refuse to send it; the value stays the last good one.

export interface JsonText {
  text: string;
  mistake: string | null;
  /** Fills the text from the value, when the view opens. */
  open: () => void;
  typed: (next: string) => void;
}

export function useJsonText<T>(value: T, onChange: (next: T, invalid?: string) => void, empty: T | undefined = undefined): JsonText {
  const [text, setText] = useState('');
  const [mistake, setMistake] = useState<string | null>(null);
  const open = () => {
    setText(value === null || value === undefined ? '' : json(value));
    setMistake(null);
  };
  const typed = (next: string) => {
    setText(next);
    if (next.trim() === '' && empty !== undefined) {
      setMistake(null);
      onChange(empty);
      return;
    }
    try {
      const parsed = JSON.parse(next) as T;
      setMistake(null);
      onChange(parsed);
    } catch (error) {
      const message = `Not valid JSON: ${(error as Error).message}`;
      setMistake(message);
      onChange(value, message);
    }
  };
  return { text, mistake, open, typed };
}

export function JsonView({ label, state, hint }: { label: string; state: JsonText; hint?: string }) {
  return (
    <>
      <TextArea label={label} class="mono" rows={8} value={state.text} onInput={(e) => state.typed(e.currentTarget.value)} hint={hint} />
      {state.mistake ? (
        <p class="field-error" role="alert">
          {state.mistake}
        </p>
      ) : null}
    </>
  );
}
