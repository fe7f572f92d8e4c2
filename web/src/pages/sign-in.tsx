import { useState } from 'preact/hooks';
import { api, errorText } from '../api.js';
import { ErrorBox } from '../components/ui.js';
import type { SessionInfo } from '../types.js';

/** Sign in by pasting a server API key; the server answers with an httpOnly session cookie. */
export function SignIn({ message, onSignedIn }: { message: string | null; onSignedIn: (session: SessionInfo) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await api<SessionInfo>('POST', '/ui/session', { key: key.trim() }));
    } catch (caught) {
      setError(errorText(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="sign-in">
      <h1>Sign in to Verdict</h1>
      {message ? (
        <p class="notice" role="status">
          {message}
        </p>
      ) : null}
      <form onSubmit={submit}>
        <div class="field">
          <label for="key">Server API key</label>
          <input
            id="key"
            name="key"
            type="password"
            autocomplete="off"
            spellcheck={false}
            required
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
            aria-describedby="key-hint"
          />
          <small id="key-hint" class="hint">
            Paste a server key (<code>vd_srv_…</code>), for example the one <code>verdict workspaces create</code> printed. The key is exchanged for a 12-hour
            session cookie and is not stored in the browser.
          </small>
        </div>
        <ErrorBox error={error} />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
