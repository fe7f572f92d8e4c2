import type { JSX } from 'preact';
import { useEffect } from 'preact/hooks';
import { PageTitle } from './components/ui.js';
import { ApiKeys } from './pages/api-keys.js';
import { Environments } from './pages/environments.js';
import { AuditLog } from './pages/audit.js';
import { ExperimentDetail } from './pages/experiment.js';
import { ExperimentForm } from './pages/experiment-form.js';
import { Experiments } from './pages/experiments.js';
import { ExperimentTemplates } from './pages/experiment-templates.js';
import { Leads } from './pages/leads.js';
import { People } from './pages/people.js';
import { MetricDetail } from './pages/metric.js';
import { Metrics } from './pages/metrics.js';
import { MutexGroups } from './pages/mutex-groups.js';
import { HoldoutDetail } from './pages/holdout.js';
import { Holdouts } from './pages/holdouts.js';
import { Results } from './pages/results.js';
import { Segments } from './pages/segments.js';
import { TemplateDetail } from './pages/template.js';
import { Templates } from './pages/templates.js';
import { WebhookEndpointDetail } from './pages/webhook-endpoint.js';
import { WebhookEndpoints } from './pages/webhook-endpoints.js';
import { WebhookSourceDetail } from './pages/webhook-source.js';
import { WebhookSources } from './pages/webhook-sources.js';
import { DataSources } from './pages/warehouse/data-sources.js';
import { FactTables } from './pages/warehouse/fact-tables.js';
import { AssignmentSources } from './pages/warehouse/assignment-sources.js';
import { Link, match, navigate, useLocation, type Location } from './router.js';

type Page = (params: Record<string, string>, where: Location) => JSX.Element;

/** Every page of the UI by its path under /ui; the first match wins. */
const pages: [string, Page][] = [
  ['/experiments', (_p, where) => <Experiments status={where.search.get('status') ?? ''} />],
  ['/experiments/new', () => <ExperimentForm />],
  ['/experiment-templates', () => <ExperimentTemplates />],
  ['/experiments/:id', (p) => <ExperimentDetail key={p.id} id={p.id ?? ''} />],
  ['/experiments/:id/results', (p) => <Results key={p.id} id={p.id ?? ''} />],
  ['/metrics', () => <Metrics />],
  ['/metrics/:id', (p) => <MetricDetail key={p.id} id={p.id ?? ''} />],
  ['/segments', () => <Segments />],
  ['/mutex-groups', () => <MutexGroups />],
  ['/holdouts', () => <Holdouts />],
  ['/holdouts/:id', (p) => <HoldoutDetail key={p.id} id={p.id ?? ''} />],
  ['/environments', () => <Environments />],
  ['/api-keys', () => <ApiKeys />],
  // Keyed by the query, so the filter form shows the filters of the URL (a link, Clear, the back button).
  ['/audit', (_p, where) => <AuditLog key={where.search.toString()} initial={Object.fromEntries(where.search)} />],
  ['/templates', () => <Templates />],
  ['/templates/:id', (p) => <TemplateDetail key={p.id} id={p.id ?? ''} />],
  ['/webhook-sources', () => <WebhookSources />],
  ['/webhook-sources/:id', (p) => <WebhookSourceDetail key={p.id} id={p.id ?? ''} />],
  ['/webhook-endpoints', () => <WebhookEndpoints />],
  ['/webhook-endpoints/:id', (p) => <WebhookEndpointDetail key={p.id} id={p.id ?? ''} />],
  ['/leads', () => <Leads />],
  ['/people', () => <People />],
  ['/data-sources', () => <DataSources />],
  ['/fact-tables', () => <FactTables />],
  ['/assignment-sources', () => <AssignmentSources />],
];

export function Routes() {
  const where = useLocation();
  // After useLocation's own effect, so its listener hears the redirect.
  useEffect(() => {
    if (where.path === '/') navigate('/experiments', true);
  }, [where.path]);
  if (where.path === '/') return null;
  for (const [pattern, page] of pages) {
    const params = match(pattern, where.path);
    // Keyed by the full URL so a page's state starts fresh when its address changes.
    if (params) return <div key={where.path + where.search.toString()}>{page(params, where)}</div>;
  }
  return (
    <>
      <PageTitle>Page not found</PageTitle>
      <p>
        There is no page at this address. Go to the <Link href="/experiments">experiments</Link>.
      </p>
    </>
  );
}
