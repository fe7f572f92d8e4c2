import type { ComponentChildren } from 'preact';
import { Link, useLocation } from '../router.js';
import type { SessionInfo } from '../types.js';

const sections: [string, string][] = [
  ['/experiments', 'Experiments'],
  ['/experiment-templates', 'Experiment templates'],
  ['/metrics', 'Metrics'],
  ['/segments', 'Segments'],
  ['/mutex-groups', 'Mutex groups'],
  ['/holdouts', 'Holdouts'],
  ['/environments', 'Environments'],
  ['/api-keys', 'API keys'],
  ['/audit', 'Audit log'],
  ['/templates', 'Templates'],
  ['/webhook-sources', 'Webhook sources'],
  ['/webhook-endpoints', 'Webhook endpoints'],
  ['/leads', 'Leads'],
  ['/people', 'People'],
  ['/data-sources', 'Data sources'],
  ['/fact-tables', 'Fact tables'],
  ['/assignment-sources', 'Assignment sources'],
];

/** Sections only admins can use (the server refuses the rest; the nav leaves them out). */
const ADMIN_ONLY = new Set(['/people', '/api-keys']);

export function Layout({ session, onSignOut, children }: { session: SessionInfo; onSignOut: (everywhere?: boolean) => void; children: ComponentChildren }) {
  const where = useLocation();
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <div class="brand">
          <Link href="/experiments">Verdict</Link>
          <span class="workspace" title="workspace">
            {session.workspace.name}
          </span>
        </div>
        <div class="who">
          {session.user ? (
            <span class="muted" title={`signed in as ${session.user.email}`}>
              {session.user.name ?? session.user.email} · {session.role}
            </span>
          ) : session.key ? (
            <span class="muted" title={`signed in with the API key ${session.key.prefix}…${session.key.last_four}`} data-testid="signed-in-as">
              {session.key.name}
            </span>
          ) : null}
          <button type="button" onClick={() => onSignOut()}>
            Sign out
          </button>
          {session.user ? (
            <button type="button" onClick={() => onSignOut(true)}>
              Sign out everywhere
            </button>
          ) : null}
        </div>
      </header>
      <nav class="sections" aria-label="Sections">
        <ul>
          {sections
            .filter(([href]) => session.role === 'admin' || !ADMIN_ONLY.has(href))
            .map(([href, label]) => (
              <li key={href}>
                <Link href={href} aria-current={where.path === href || where.path.startsWith(`${href}/`) ? 'page' : undefined}>
                  {label}
                </Link>
              </li>
            ))}
        </ul>
      </nav>
      <main id="main">{children}</main>
    </>
  );
}
