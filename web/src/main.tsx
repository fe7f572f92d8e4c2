import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, onSessionLost, setCsrfToken } from './api.js';
import { Layout } from './components/layout.js';
import { Routes } from './routes.js';
import { SignIn } from './pages/sign-in.js';
import { currentSession } from './session.js';
import type { SessionInfo } from './types.js';
import './styles.css';

type SessionState = { kind: 'checking' } | { kind: 'signed-out'; message: string | null } | { kind: 'signed-in'; session: SessionInfo };

function App() {
  const [state, setState] = useState<SessionState>({ kind: 'checking' });

  const signedIn = (session: SessionInfo) => {
    setCsrfToken(session.csrf_token);
    currentSession.keyId = session.key.id;
    currentSession.workspaceName = session.workspace.name;
    setState({ kind: 'signed-in', session });
  };
  const signedOut = (message: string | null) => {
    setCsrfToken(null);
    currentSession.keyId = null;
    setState({ kind: 'signed-out', message });
  };

  useEffect(() => {
    onSessionLost((message) => signedOut(`You were signed out: ${message}`));
    api<SessionInfo | { signed_in: false; reason: string }>('GET', '/ui/session').then(
      (answer) => {
        if (answer.signed_in) signedIn(answer);
        else signedOut(answer.reason === 'expired' ? 'Your session expired after 12 hours. Sign in again.' : null);
      },
      () => signedOut('The server could not be reached. Reload the page to try again.'),
    );
  }, []);

  const signOut = async () => {
    try {
      await api('DELETE', '/ui/session');
    } finally {
      signedOut('You have signed out.');
    }
  };

  if (state.kind === 'checking') return <p class="muted boot">Loading Verdict…</p>;
  if (state.kind === 'signed-out') return <SignIn message={state.message} onSignedIn={signedIn} />;
  return (
    <Layout session={state.session} onSignOut={signOut}>
      <Routes />
    </Layout>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
