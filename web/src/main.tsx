import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, onSessionLost, setCsrfToken } from './api.js';
import { Layout } from './components/layout.js';
import { Routes } from './routes.js';
import { SignIn, type SignInMethods } from './pages/sign-in.js';
import { AcceptLink, linkPage } from './pages/accept-link.js';
import { currentSession } from './session.js';
import type { SessionInfo } from './types.js';
import './styles.css';
import './people.css';

type SessionState = { kind: 'checking' } | { kind: 'signed-out'; message: string | null } | { kind: 'signed-in'; session: SessionInfo };

/** Until the server says otherwise (it does on the first GET /ui/session), offer what a default server offers. */
const DEFAULT_METHODS: SignInMethods = { key_sign_in: true, sso: false };

function App() {
  const [state, setState] = useState<SessionState>({ kind: 'checking' });
  const [methods, setMethods] = useState<SignInMethods>(DEFAULT_METHODS);

  const signedIn = (session: SessionInfo) => {
    setCsrfToken(session.csrf_token);
    currentSession.keyId = session.key?.id ?? null;
    currentSession.user = session.user ? { id: session.user.id, name: session.user.name ?? session.user.email } : null;
    currentSession.workspaceName = session.workspace.name;
    currentSession.role = session.role;
    // The role bounds what the pages show (people.css); the server enforces it either way.
    document.body.dataset.role = session.role;
    setState({ kind: 'signed-in', session });
  };
  const signedOut = (message: string | null) => {
    setCsrfToken(null);
    currentSession.keyId = null;
    currentSession.user = null;
    delete document.body.dataset.role;
    setState({ kind: 'signed-out', message });
  };

  useEffect(() => {
    onSessionLost((message) => signedOut(`You were signed out: ${message}`));
    api<SessionInfo | ({ signed_in: false; reason: string } & SignInMethods)>('GET', '/ui/session').then(
      (answer) => {
        if (!answer.signed_in) setMethods({ key_sign_in: answer.key_sign_in, sso: answer.sso });
        if (answer.signed_in) signedIn(answer);
        else signedOut(answer.reason === 'expired' ? 'Your session expired after 12 hours. Sign in again.' : null);
      },
      () => signedOut('The server could not be reached. Reload the page to try again.'),
    );
  }, []);

  const signOut = async (everywhere = false) => {
    try {
      await api('DELETE', everywhere ? '/ui/session?everywhere=1' : '/ui/session');
    } finally {
      signedOut(everywhere ? 'You have signed out on every device.' : 'You have signed out.');
    }
  };

  // A one-time link (invitation, password reset) opens its own page, signed in or not.
  const link = linkPage(location.pathname);
  if (link) return <AcceptLink {...link} />;
  if (state.kind === 'checking') return <p class="muted boot">Loading Verdict…</p>;
  if (state.kind === 'signed-out') return <SignIn message={state.message} onSignedIn={signedIn} methods={methods} />;
  return (
    <Layout session={state.session} onSignOut={signOut}>
      <Routes />
    </Layout>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
