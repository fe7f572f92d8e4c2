import { useState } from 'preact/hooks';
import { api, errorText } from '../api.js';
import { ErrorBox, Field } from '../components/ui.js';
import type { SessionInfo } from '../types.js';

/** How this server lets people in (GET /ui/session answers it while signed out). */
export interface SignInMethods {
  key_sign_in: boolean;
  sso: boolean;
}

/**
 * Sign in with your email address and password, with single sign-on when the server offers it, or
 * (the fallback an operator may turn off with VERDICT_UI_KEY_SIGN_IN=0) by pasting a server key.
 * Either way the server answers with an httpOnly session cookie.
 */
export function SignIn({ message, onSignedIn, methods }: { message: string | null; onSignedIn: (session: SessionInfo) => void; methods: SignInMethods }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const withKey = methods.key_sign_in && key.trim() !== '';

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = withKey ? { key: key.trim() } : { email: email.trim(), password };
      onSignedIn(await api<SessionInfo>('POST', '/ui/session', body));
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
      {methods.sso ? (
        <p>
          <a class="button primary" href="/ui/oidc/start">
            Continue with single sign-on
          </a>
        </p>
      ) : null}
      <form onSubmit={submit}>
        <Credentials methods={methods} withKey={withKey} values={{ email, password, key }} set={{ email: setEmail, password: setPassword, key: setKey }} />
        <ErrorBox error={error} />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}

type Values = { email: string; password: string; key: string };

/** Email and password, and the server key field while that fallback is on. */
function Credentials({
  methods,
  withKey,
  values,
  set,
}: {
  methods: SignInMethods;
  withKey: boolean;
  values: Values;
  set: { [K in keyof Values]: (value: string) => void };
}) {
  const { email, password, key } = values;
  const setEmail = set.email;
  const setPassword = set.password;
  const setKey = set.key;
  return (
    <>
      <Field
        label="Email"
        name="email"
        type="email"
        autocomplete="username"
        required={!withKey}
        value={email}
        onInput={(e) => setEmail(e.currentTarget.value)}
      />
      <Field
        label="Password"
        name="password"
        type="password"
        autocomplete="current-password"
        required={!withKey}
        value={password}
        onInput={(e) => setPassword(e.currentTarget.value)}
      />
      {methods.key_sign_in ? (
        <Field
          label="Server API key"
          name="key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          value={key}
          onInput={(e) => setKey(e.currentTarget.value)}
          hint="Or, instead of an account, paste a server key (vd_srv_…), for example the one verdict workspaces create printed. It is exchanged for a 12-hour session cookie and is not stored in the browser."
        />
      ) : null}
    </>
  );
}
