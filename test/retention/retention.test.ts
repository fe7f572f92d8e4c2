import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { RETENTION_PURGE_JOB } from '../../src/features/retention/jobs.js';
import { purgeExpiredEvents } from '../../src/features/retention/purge.js';
import { enqueueJob } from '../../src/jobs/queue.js';
import { DAY, HOUR, ManualClock, TWO_ARMS, assignUnits, compute, createExperiment, createMetric, sendEvents } from '../analysis/support.js';
import { describeEachStore } from '../support/each-dialect.js';
import { runQueuedJobs } from '../support/jobs.js';
import type { Bootstrap, TestServer } from '../support/server.js';

// VERDICT_EVENT_RETENTION_DAYS through the real service: the hourly job purges raw events older
// than the retention and exposures of experiments archived longer ago, never what a running
// experiment still counts (its CUPED lookback before its start), and says so in the audit log.

const T0 = Date.UTC(2032, 5, 1, 9);
const RETENTION_DAYS = 30;
const clock = new ManualClock(T0);

async function runJob(server: TestServer): Promise<void> {
  await enqueueJob(server.ctx.db, { name: RETENTION_PURGE_JOB, jobKey: `${RETENTION_PURGE_JOB}@test-${clock.now()}` }, clock.now());
  await runQueuedJobs(server, { name: RETENTION_PURGE_JOB });
}

/** The workspace's event times, read where its events are (ClickHouse, as the analysis reads them, when configured). */
async function eventTimes(server: TestServer, workspaceId: string): Promise<number[]> {
  const clickhouse = server.ctx.clickhouse;
  if (clickhouse) {
    const result = await clickhouse.client.query({
      query: 'SELECT toString(occurred_at) AS t FROM events FINAL WHERE workspace_id = {workspace:String} ORDER BY occurred_at',
      query_params: { workspace: workspaceId },
      format: 'JSONEachRow',
    });
    return (await result.json<{ t: string }>()).map((row) => Number(row.t));
  }
  const rows = await server.ctx.db.selectFrom('events').select('occurred_at').where('workspace_id', '=', workspaceId).orderBy('occurred_at').execute();
  return rows.map((row) => Number(row.occurred_at));
}

async function exposureCount(server: TestServer, experimentId: string): Promise<number> {
  return (await server.ctx.db.selectFrom('exposures').select('id').where('experiment_id', '=', experimentId).execute()).length;
}

/** ClickHouse's copy of an experiment's exposures (null without ClickHouse). */
async function copiedExposures(server: TestServer, experimentId: string): Promise<number | null> {
  const clickhouse = server.ctx.clickhouse;
  if (!clickhouse) return null;
  const result = await clickhouse.client.query({
    query: 'SELECT toString(count()) AS n FROM exposures FINAL WHERE experiment_id = {experiment:String}',
    query_params: { experiment: experimentId },
    format: 'JSONEachRow',
  });
  return Number((await result.json<{ n: string }>())[0]?.n);
}

async function purgeEntries(server: TestServer, key: string): Promise<any[]> {
  const answer = await server.request('GET', '/v1/audit?action=retention.purged', { key });
  expect(answer.status, answer.text).toBe(200);
  return answer.body.data;
}

describe('VERDICT_EVENT_RETENTION_DAYS', () => {
  it('is off when unset and must be a whole number of days when set', () => {
    expect(loadConfig({}).eventRetentionDays).toBeNull();
    expect(loadConfig({ VERDICT_EVENT_RETENTION_DAYS: '90' }).eventRetentionDays).toBe(90);
    expect(() => loadConfig({ VERDICT_EVENT_RETENTION_DAYS: '0' })).toThrow(ConfigError);
    expect(() => loadConfig({ VERDICT_EVENT_RETENTION_DAYS: '1.5' })).toThrow(/VERDICT_EVENT_RETENTION_DAYS must be a whole number from 1 to 36500/);
    // A retention so long that its cutoff is no date would stop every purge: refused at start.
    expect(() => loadConfig({ VERDICT_EVENT_RETENTION_DAYS: '110000000' })).toThrow(ConfigError);
  });
});

describeEachStore(
  'event retention',
  (server) => {
    let acme: Bootstrap;
    let other: Bootstrap;
    const ids = { running: '', archivedEarly: '', archivedLate: '' };
    let before: any;

    beforeAll(async () => {
      clock.set(T0);
      acme = await server().bootstrap('Acme');
      other = await server().bootstrap('Other');
      const metric = await createMetric(server(), acme.key, { key: 'purchase', event_key: 'purchase', kind: 'binary' });
      const base = { environment_id: acme.environmentId, variants: TWO_ARMS, primary_metric_id: metric };
      // Running since T0 with a 14-day CUPED lookback: it reads events from T0 - 14 days on.
      ids.running = (await createExperiment(server(), acme.key, { ...base, key: 'running', variance_reduction: { method: 'cuped', lookback_days: 14 } })).id;
      ids.archivedEarly = (await createExperiment(server(), acme.key, { ...base, key: 'archived-early' })).id;
      ids.archivedLate = (await createExperiment(server(), acme.key, { ...base, key: 'archived-late' })).id;
      await assignUnits(server(), acme.key, 'running', ['u1', 'u2', 'u3']);
      await assignUnits(server(), acme.key, 'archived-early', ['u4', 'u5']);
      await assignUnits(server(), acme.key, 'archived-late', ['u6', 'u7']);
      clock.set(T0 + 4 * HOUR); // events are not accepted from the future
      await sendEvents(server(), acme.key, [
        { event_key: 'purchase', unit_id: 'u1', occurred_at: T0 - 20 * DAY }, // before the lookback: may go
        { event_key: 'purchase', unit_id: 'u1', occurred_at: T0 - 10 * DAY }, // in the lookback: stays
        { event_key: 'purchase', unit_id: 'u1', occurred_at: T0 + HOUR },
        { event_key: 'purchase', unit_id: 'u2', occurred_at: T0 + HOUR },
      ]);
      await sendEvents(
        server(),
        other.key,
        [1, 2, 3].map((n) => ({ event_key: 'purchase', unit_id: `o${n}`, occurred_at: T0 + n * HOUR })),
      );
      // Computed once each, so with ClickHouse their exposures are copied there too.
      await compute(server(), acme.key, ids.archivedEarly);
      await compute(server(), acme.key, ids.archivedLate);
      expect((await server().request('DELETE', `/v1/experiments/${ids.archivedEarly}`, { key: acme.key })).status).toBe(204);
      clock.set(T0 + 40 * DAY);
      expect((await server().request('DELETE', `/v1/experiments/${ids.archivedLate}`, { key: acme.key })).status).toBe(204);
      clock.set(T0 + 45 * DAY); // the cutoff is now T0 + 15 days
      before = await compute(server(), acme.key, ids.running);
      await runJob(server());
    });

    it('is an hourly job of the service', () => {
      expect(server().ctx.jobs.recurring.map((job) => job.name)).toContain(RETENTION_PURGE_JOB);
    });

    it('keeps the events a running experiment counts, its CUPED lookback included, and removes older ones', async () => {
      expect(await eventTimes(server(), acme.workspaceId)).toEqual([T0 - 10 * DAY, T0 + HOUR, T0 + HOUR]);
      const after = await compute(server(), acme.key, ids.running);
      expect(after.per_variant).toEqual(before.per_variant);
      expect(after.primary_metric.cuped).toEqual(before.primary_metric.cuped);
    });

    it('removes every event older than the retention in a workspace where no experiment counts them', async () => {
      expect(await eventTimes(server(), other.workspaceId)).toEqual([]);
    });

    it('removes the exposures of experiments archived longer ago than the retention, and only those', async () => {
      expect(await exposureCount(server(), ids.archivedEarly)).toBe(0);
      expect(await exposureCount(server(), ids.archivedLate)).toBe(2);
      expect(await exposureCount(server(), ids.running)).toBe(3);
      if (server().ctx.clickhouse) {
        expect(await copiedExposures(server(), ids.archivedEarly)).toBe(0);
        expect(await copiedExposures(server(), ids.archivedLate)).toBe(2);
      }
      const archived = await server().request('GET', `/v1/experiments/${ids.archivedEarly}`, { key: acme.key });
      expect(archived.body.status).toBe('archived');
    });

    it('writes one audit entry per workspace saying what it removed', async () => {
      const [acmeEntry, ...moreAcme] = await purgeEntries(server(), acme.key);
      expect(moreAcme).toEqual([]);
      expect(acmeEntry).toMatchObject({ target_type: 'workspace', target_id: acme.workspaceId, actor_id: null });
      expect(acmeEntry.payload).toEqual({
        retention_days: RETENTION_DAYS,
        workspace_id: acme.workspaceId,
        events_removed: 1,
        events_before: new Date(T0 - 14 * DAY).toISOString(),
        exposures_removed: 2,
        experiments: [ids.archivedEarly],
      });
      const [otherEntry] = await purgeEntries(server(), other.key);
      expect(otherEntry.payload).toMatchObject({ events_removed: 3, events_before: new Date(T0 + 15 * DAY).toISOString(), exposures_removed: 0 });
    });

    it('works in small batches, and a later run finds nothing more to remove', async () => {
      await sendEvents(
        server(),
        other.key,
        [1, 2, 3, 4, 5].map((n) => ({ event_key: 'late', unit_id: `l${n}`, occurred_at: clock.now() - 20 * DAY })),
      );
      clock.set(clock.now() + 15 * DAY);
      const purged = await purgeExpiredEvents({
        db: server().ctx.db,
        outside: server().ctx.eventStorage.outside,
        retentionDays: RETENTION_DAYS,
        now: clock.now(),
        batchSize: 2,
      });
      expect(purged).toEqual([expect.objectContaining({ workspace_id: other.workspaceId, events_removed: 5 })]);
      const [latest] = await purgeEntries(server(), other.key);
      expect(latest.payload.events_removed).toBe(5);
      expect(
        await purgeExpiredEvents({
          db: server().ctx.db,
          outside: server().ctx.eventStorage.outside,
          retentionDays: RETENTION_DAYS,
          now: clock.now(),
          batchSize: 2,
        }),
      ).toEqual([]);
      expect(await eventTimes(server(), acme.workspaceId)).toEqual([T0 - 10 * DAY, T0 + HOUR, T0 + HOUR]);
    });
  },
  { clock, config: { eventRetentionDays: RETENTION_DAYS } },
);
