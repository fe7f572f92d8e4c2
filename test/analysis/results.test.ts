import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import type { TestServer } from '../support/server.js';
import { HOUR, ManualClock, compute, createExperiment, exposeExactly, expectClose } from './support.js';

const T0 = Date.UTC(2031, 8, 1, 9);
const clock = new ManualClock(T0);

async function signIn(server: TestServer, key: string): Promise<string> {
  const response = await server.request('POST', '/ui/session', { body: { key } });
  expect(response.status, response.text).toBe(201);
  const token = /verdict_session=([^;]+)/.exec(response.headers.get('set-cookie') ?? '')?.[1];
  if (!token) throw new Error('no session cookie');
  return `verdict_session=${token}`;
}

async function auditActions(server: TestServer, key: string, experimentId: string, action: string) {
  const response = await server.request('GET', `/v1/audit?target_id=${experimentId}&action=${action}`, { key });
  expect(response.status).toBe(200);
  return response.body.data as any[];
}

/** The weights the running experiment changes to: 150:50 is exactly 75:25. */
const REWEIGHTED = [
  { key: 'control', weight: 75 },
  { key: 'treatment', weight: 25 },
  { key: 'off', weight: 0 },
];

/**
 * A running experiment on a skewed split (150 control units to 50 treatment units, exposed at T0),
 * taken through the first `steps` steps of its timeline: 1, a snapshot at T0 + 1 h; 2, the weights
 * changed and a snapshot at T0 + 2 h; 3, a snapshot at T0 + 3 h. Each test that needs a later step
 * replays it on an experiment of its own.
 */
async function skewedExperiment(server: TestServer, key: string, environmentId: string, experimentKey: string, steps: 1 | 2 | 3) {
  clock.set(T0);
  const experiment = await createExperiment(server, key, {
    environment_id: environmentId,
    key: experimentKey,
    variants: [
      { key: 'control', weight: 50 },
      { key: 'treatment', weight: 50 },
      { key: 'off', weight: 0 },
    ],
  });
  await exposeExactly(server, key, experiment, { control: 150, treatment: 50 }, 's');
  const snapshots: any[] = [];
  for (let step = 1; step <= steps; step += 1) {
    if (step === 2) {
      const patched = await server.request('PATCH', `/v1/experiments/${experiment.id}`, { key, body: { variants: REWEIGHTED } });
      expect(patched.status, patched.text).toBe(200);
    }
    clock.set(T0 + step * HOUR);
    snapshots.push(await compute(server, key, experiment.id));
  }
  return { experiment, snapshots };
}

describeEachDialect(
  'analysis results, history and peeks',
  (server) => {
    // A read-only fixture: the skewed experiment after its first snapshot. The tests that change
    // weights, grow the history or log peeks take experiments of their own through the timeline.
    let key: string;
    let environmentId: string;
    let experiment: any;
    let firstSnapshot: any;

    beforeAll(async () => {
      ({ key, environmentId } = await server().bootstrap('Results'));
      const skewed = await skewedExperiment(server(), key, environmentId, 'skewed', 1);
      experiment = skewed.experiment;
      firstSnapshot = skewed.snapshots[0];
    });

    it('warns of a sample-ratio mismatch on a skewed split and still reports sample sizes without a primary metric', () => {
      const snapshot = firstSnapshot;
      // scipy.stats.chisquare([150, 50]).pvalue (SciPy 1.17); the zero-weight arm is skipped. The
      // p-value is 1 - CDF, exact to about 1e-16 absolute (docs/statistics.md), hence the tolerance.
      expectClose(snapshot.srm_chi_squared_p, 1.537459794428033e-12, 1e-15, 'srm_chi_squared_p');
      expect(snapshot.srm_warning).toBe(true);
      expect(snapshot.traffic).toEqual([
        { variant_key: 'control', weight: 50, exposed_units: 150 },
        { variant_key: 'treatment', weight: 50, exposed_units: 50 },
        { variant_key: 'off', weight: 0, exposed_units: 0 },
      ]);
      expect(snapshot.primary_metric).toBeNull();
      expect(snapshot.guardrails).toEqual([]);
      expect(snapshot.per_variant).toEqual([
        {
          variant_key: 'control',
          is_control: true,
          sample_size: 150,
          conversions: 0,
          observed_rate: null,
          posterior: { mean: null, credible_interval_95: null },
          prob_best: null,
          expected_loss_if_stop_now: null,
          effect: null,
        },
        {
          variant_key: 'treatment',
          is_control: false,
          sample_size: 50,
          conversions: 0,
          observed_rate: null,
          posterior: { mean: null, credible_interval_95: null },
          prob_best: null,
          expected_loss_if_stop_now: null,
          effect: null,
        },
      ]);
      expect(snapshot).toMatchObject({
        decision_rule_satisfied: false,
        decision: { verdict: 'keep_running', variant_key: null, reason: expect.stringMatching(/no primary metric/) },
        weights_changed_since_start: false,
        late_event_count: 0,
      });
    });

    it('marks snapshots after a weight change while running', async () => {
      const { experiment } = await skewedExperiment(server(), key, environmentId, 'skewed-reweighted', 1);
      const patched = await server().request('PATCH', `/v1/experiments/${experiment.id}`, { key, body: { variants: REWEIGHTED } });
      expect(patched.status, patched.text).toBe(200);
      clock.set(T0 + 2 * HOUR);
      const snapshot = await compute(server(), key, experiment.id);
      expect(snapshot.weights_changed_since_start).toBe(true);
      // 150:50 is exactly 75:25: no mismatch against the new weights.
      expect(snapshot.srm_chi_squared_p).toBe(1);
      expect(snapshot.srm_warning).toBe(false);
    });

    it('grows the history with each computation, oldest first, with paging and since', async () => {
      const { experiment } = await skewedExperiment(server(), key, environmentId, 'skewed-history', 2);
      clock.set(T0 + 3 * HOUR);
      const third = await compute(server(), key, experiment.id);
      const history = await server().request('GET', `/v1/experiments/${experiment.id}/results/history`, { key });
      expect(history.status).toBe(200);
      expect(history.body.experiment_id).toBe(experiment.id);
      expect(history.body.next_cursor).toBeNull();
      const times = history.body.snapshots.map((snapshot: any) => snapshot.computed_at);
      expect(times).toEqual([1, 2, 3].map((hours) => new Date(T0 + hours * HOUR).toISOString()));
      expect(history.body.snapshots[2]).toEqual(third);

      const first = await server().request('GET', `/v1/experiments/${experiment.id}/results/history?limit=2`, { key });
      expect(first.body.snapshots).toHaveLength(2);
      const rest = await server().request('GET', `/v1/experiments/${experiment.id}/results/history?limit=2&cursor=${first.body.next_cursor}`, { key });
      expect(rest.body.snapshots.map((snapshot: any) => snapshot.id)).toEqual([third.id]);
      const since = new Date(T0 + 2 * HOUR).toISOString();
      const recent = await server().request('GET', `/v1/experiments/${experiment.id}/results/history?since=${since}`, { key });
      expect(recent.body.snapshots).toHaveLength(2);
    });

    it('logs a peek for each results read through the admin UI session, none for API keys, and counts them in later snapshots', async () => {
      const { experiment } = await skewedExperiment(server(), key, environmentId, 'skewed-peeks', 3);
      const cookie = await signIn(server(), key);
      clock.set(T0 + 4 * HOUR);
      const viaSession = await server().request('GET', `/v1/experiments/${experiment.id}/results`, { headers: { cookie } });
      expect(viaSession.status).toBe(200);
      await server().request('GET', `/v1/experiments/${experiment.id}/results`, { headers: { cookie } });
      await server().request('GET', `/v1/experiments/${experiment.id}/results`, { key });
      await server().request('GET', `/v1/experiments/${experiment.id}/results/history`, { headers: { cookie } });
      const peeks = await auditActions(server(), key, experiment.id, 'experiment.results_peeked');
      expect(peeks).toHaveLength(2);
      expect(peeks[0]).toMatchObject({
        target_type: 'experiment',
        target_id: experiment.id,
        actor_id: expect.any(String),
        payload: { snapshot_id: viaSession.body.id },
      });
      clock.set(T0 + 5 * HOUR);
      expect((await compute(server(), key, experiment.id)).peek_count_at_computation).toBe(2);
    });

    it('answers 404 for unknown experiments and for other workspaces, 409 before the start, 400 for bad paging, 403 for client keys', async () => {
      const other = await server().bootstrap('Other');
      for (const [method, path] of [
        ['GET', 'results'],
        ['GET', 'results/history'],
        ['POST', 'results/compute'],
      ] as const) {
        const foreign = await server().request(method, `/v1/experiments/${experiment.id}/${path}`, { key: other.key });
        expect(foreign.status, `${method} ${path}`).toBe(404);
        expect((await server().request(method, `/v1/experiments/01J00000000000000000000000/${path}`, { key })).status).toBe(404);
      }
      const draft = await createExperiment(
        server(),
        key,
        {
          environment_id: environmentId,
          key: 'draft',
          variants: [
            { key: 'a', weight: 50 },
            { key: 'b', weight: 50 },
          ],
        },
        false,
      );
      const refused = await server().request('POST', `/v1/experiments/${draft.id}/results/compute`, { key });
      expect(refused.status).toBe(409);
      expect(refused.body.type).toBe('https://verdict.dev/problems/experiment-not-started');
      expect(refused.headers.get('content-type')).toContain('application/problem+json');
      for (const query of ['since=yesterday', 'cursor=not-a-cursor', 'limit=0']) {
        const malformed = await server().request('GET', `/v1/experiments/${experiment.id}/results/history?${query}`, { key });
        expect(malformed.status, query).toBe(400);
      }
      const clientKey = (await server().request('POST', '/v1/api-keys', { key, body: { name: 'sdk', kind: 'client' } })).body.key;
      expect((await server().request('GET', `/v1/experiments/${experiment.id}/results`, { key: clientKey })).status).toBe(403);
    });
  },
  { clock },
);
