// An endpoint limited to chosen experiments (issue #52): it is sent the events of those
// experiments only, its delivery log names the experiment each event is about, an id that is no
// experiment of the workspace is refused beside the field and changes nothing, and the filter's
// changes are audit-logged by name. On SQLite and PostgreSQL.
import { expect, it, vi } from 'vitest';
import { describeEach } from '../support/describe-each.js';
import { auditOf, jobsSettled } from '../webhooks/support.js';
import { startedExperiment, useAlertsServer, type AlertsEnv, type Workspace } from './support.js';

vi.setConfig({ testTimeout: 60_000 });

/** An endpoint of the workspace at its own receiver path, limited to `experimentIds` (null: every experiment). */
async function filteredEndpoint(env: AlertsEnv, ws: Workspace, path: string, experimentIds: string[] | null) {
  const created = await env.server.request('POST', '/v1/webhook-endpoints', {
    key: ws.key,
    body: { url: `${env.base}${path}`, event_types: ['experiment.started', 'experiment.stopped'], experiment_ids: experimentIds, description: path },
  });
  expect(created.status, created.text).toBe(201);
  return created.body;
}

async function receivedAt(env: AlertsEnv, path: string) {
  await jobsSettled(env.server, 'webhooks.deliver');
  return env.receiver.received.filter((item) => item.path === path).map((item) => JSON.parse(item.body));
}

describeEach('alerts limited to chosen experiments', {}, ({ dialect }) => {
  const env = useAlertsServer(dialect);

  it('sends an endpoint the events of its chosen experiments only, and its delivery log names each one', async () => {
    const { server } = env();
    const ws = await env().workspace();
    const checkout = await server.request('POST', '/v1/experiments', {
      key: ws.key,
      body: {
        environment_id: ws.environmentId,
        key: 'checkout',
        name: 'One-page checkout',
        hypothesis: 'h',
        unit_type: 'user',
        variants: [
          { key: 'control', weight: 50, is_control: true },
          { key: 'treatment', weight: 50 },
        ],
      },
    });
    expect(checkout.status).toBe(201);
    const path = `/filtered/${ws.workspaceId}`;
    const endpoint = await filteredEndpoint(env(), ws, path, [checkout.body.id]);
    expect(endpoint).toMatchObject({ experiment_ids: [checkout.body.id], experiments: [{ id: checkout.body.id, key: 'checkout', name: 'One-page checkout' }] });

    await server.request('POST', `/v1/experiments/${checkout.body.id}/start`, { key: ws.key });
    await startedExperiment(server, ws, 'pricing');
    const received = await receivedAt(env(), path);
    expect(received.map((event) => [event.type, event.data.experiment.key])).toEqual([['experiment.started', 'checkout']]);
    // The unfiltered endpoint of the workspace got both.
    expect((await ws.events('experiment.started')).map((event) => event.data.experiment.key).sort()).toEqual(['checkout', 'pricing']);

    const log = await server.request('GET', `/v1/webhook-endpoints/${endpoint.id}/deliveries`, { key: ws.key });
    expect(log.body.data).toHaveLength(1);
    expect(log.body.data[0]).toMatchObject({
      event_type: 'experiment.started',
      experiment: { id: checkout.body.id, key: 'checkout', name: 'One-page checkout' },
    });
    const ping = await server.request('POST', `/v1/webhook-endpoints/${endpoint.id}/test`, { key: ws.key });
    expect(ping.status).toBe(202);
    expect(ping.body.experiment).toBeNull();
  });

  it('refuses an id that is no experiment of the workspace beside the field, changing nothing; null sends every experiment again', async () => {
    const { server } = env();
    const ws = await env().workspace();
    const other = await env().workspace();
    const theirs = await startedExperiment(server, other, 'theirs');
    const ours = await startedExperiment(server, ws, 'ours');
    const before = (await server.request('GET', '/v1/webhook-endpoints', { key: ws.key })).body.data.length;

    const refused = await server.request('POST', '/v1/webhook-endpoints', {
      key: ws.key,
      body: { url: `${env().base}/nowhere`, event_types: ['*'], experiment_ids: [ours.id, theirs.id] },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual([{ pointer: '/experiment_ids/1', message: 'is not an experiment of this workspace' }]);
    expect((await server.request('GET', '/v1/webhook-endpoints', { key: ws.key })).body.data).toHaveLength(before);

    const path = `/refiltered/${ws.workspaceId}`;
    const endpoint = await filteredEndpoint(env(), ws, path, [ours.id]);
    const badPatch = await server.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { key: ws.key, body: { experiment_ids: [theirs.id] } });
    expect(badPatch.status).toBe(422);
    expect(badPatch.body.errors[0].pointer).toBe('/experiment_ids/0');
    expect((await server.request('GET', `/v1/webhook-endpoints/${endpoint.id}`, { key: ws.key })).body.experiment_ids).toEqual([ours.id]);

    const empty = await server.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { key: ws.key, body: { experiment_ids: [] } });
    expect(empty.status).toBe(422);

    const everything = await server.request('PATCH', `/v1/webhook-endpoints/${endpoint.id}`, { key: ws.key, body: { experiment_ids: null } });
    expect(everything.status, everything.text).toBe(200);
    expect(everything.body).toMatchObject({ experiment_ids: null, experiments: [] });
    const later = await startedExperiment(server, ws, 'later');
    await server.request('POST', `/v1/experiments/${later.id}/stop`, { key: ws.key, body: { reason: 'business' } });
    // Deliveries run concurrently and are not ordered; each event carries its own started_at / stopped_at.
    const laterEvents = (await receivedAt(env(), path)).map((event) => [event.type, event.data.experiment.key]);
    expect(laterEvents.sort()).toEqual([
      ['experiment.started', 'later'],
      ['experiment.stopped', 'later'],
    ]);

    const entries = await auditOf(server, ws.key, `target_id=${endpoint.id}`);
    const created = entries.find((entry) => entry.action === 'webhook_endpoint.created');
    expect(created?.payload.experiments).toEqual([{ id: ours.id, key: 'ours', name: 'Experiment ours' }]);
    const updated = entries.filter((entry) => entry.action === 'webhook_endpoint.updated');
    expect(updated).toHaveLength(1);
    expect(updated[0]?.payload.changes.experiment_ids).toMatchObject({ from: [ours.id], to: null });
  });
});
