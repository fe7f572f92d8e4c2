import { useState } from 'preact/hooks';
import { api, errorText } from '../api.js';
import { ErrorBox, Field } from '../components/ui.js';

type Purpose = 'invitation' | 'password_reset';

/** The page a one-time link opens: /ui/invitations/{token} or /ui/password-resets/{token}. */
export function linkPage(pathname: string): { purpose: Purpose; token: string } | null {
  const found = /^\/ui\/(invitations|password-resets)\/(vd_(?:inv|rst)_[A-Za-z0-9_-]+)$/.exec(pathname);
  if (!found) return null;
  return { purpose: found[1] === 'invitations' ? 'invitation' : 'password_reset', token: found[2] as string };
}

export function AcceptLink({ purpose, token }: { purpose: Purpose; token: string }) {
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const invitation = purpose === 'invitation';

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const path = invitation ? `/v1/invitations/${token}/accept` : `/v1/password-resets/${token}/accept`;
      const answer = await api<{ user: { email: string } }>('POST', path, invitation ? { name: name.trim(), password } : { password });
      setDone(answer.user.email);
    } catch (caught) {
      setError(errorText(caught));
    } finally {
      setBusy(false);
    }
  };

  if (done) {
    return (
      <main id="main" class="sign-in">
        <h1>{invitation ? 'Welcome to Verdict' : 'Password changed'}</h1>
        <p role="status">
          Your password is set. <a href="/ui/">Sign in</a> as {done}.
        </p>
      </main>
    );
  }
  return (
    <main id="main" class="sign-in">
      <h1>{invitation ? 'Accept your invitation' : 'Choose a new password'}</h1>
      <form onSubmit={submit}>
        {invitation ? <Field label="Your name" name="name" autocomplete="name" required value={name} onInput={(e) => setName(e.currentTarget.value)} /> : null}
        <Field
          label="Password"
          name="password"
          type="password"
          autocomplete="new-password"
          minLength={12}
          required
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
          hint="At least 12 characters; a few words you can remember work well."
        />
        <ErrorBox error={error} />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Saving…' : invitation ? 'Create my account' : 'Set password'}
        </button>
      </form>
    </main>
  );
}
