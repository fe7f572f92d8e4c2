import { beforeAll, expect, it } from 'vitest';
import { describeEachDialect } from '../support/each-dialect.js';
import { ManualClock } from '../support/clock.js';
import { addPerson, signInAs, type PersonSession } from './people-support.js';
import { parseCsv, runNotebook } from './export-support.js';
import { experimentWithResults } from './result-fixture.js';

const DAY = 24 * 60 * 60 * 1000;
const clock = new ManualClock();

describeEachDialect(
  'sharing: read-only links and exports',
  (server) => {
    let key: string;
    let environmentId: string;
    let editor: PersonSession;
    let viewer: PersonSession;
    let shared: { experiment: any; snapshot: any };
    let other: { experiment: any; snapshot: any };

    beforeAll(async () => {
      ({ key, environmentId } = await server().bootstrap('Sharing Co'));
      await addPerson(server(), key, 'ed@example.com', 'editor', 'Ed Itor');
      await addPerson(server(), key, 'vi@example.com', 'viewer', 'Vi Ewer');
      editor = await signInAs(server(), 'ed@example.com');
      viewer = await signInAs(server(), 'vi@example.com');
      shared = await experimentWithResults(server(), key, environmentId, 'shared_exp');
      other = await experimentWithResults(server(), key, environmentId, 'other_exp');
    }, 120_000);

    it('an editor shares a result: the URL reads that experiment’s results without any credential, each view audited', async () => {
      const created = await server().request('POST', `/v1/experiments/${shared.experiment.id}/share-links`, {
        headers: editor.change,
        body: { expires_in_days: 3 },
      });
      expect(created.status, created.text).toBe(201);
      expect(created.body).toMatchObject({ status: 'active', experiment_id: shared.experiment.id });
      expect(created.body.url).toMatch(/\/v1\/shared\/vd_shr_[A-Za-z0-9_-]{43}$/);
      for (let view = 0; view < 2; view++) {
        const read = await fetch(created.body.url);
        expect(read.status).toBe(200);
        const body = (await read.json()) as any;
        expect(body.experiment).toMatchObject({ id: shared.experiment.id, key: 'shared_exp' });
        expect(body.results.id).toBe(shared.snapshot.id);
        expect(JSON.stringify(body)).not.toContain(other.experiment.id);
      }
      // A browser opening the link gets the same results as a page with no script.
      const page = await fetch(created.body.url, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
      const html = await page.text();
      expect(html).toContain('<h1>Analysis</h1>');
      expect(html).not.toContain('<script');
      const audit = await server().request('GET', `/v1/audit?target_id=${shared.experiment.id}&target_type=experiment`, { key });
      const actions = audit.body.data.map((entry: { action: string }) => entry.action);
      expect(actions.filter((action: string) => action === 'share_link.viewed')).toHaveLength(3);
      const creation = audit.body.data.find((entry: { action: string }) => entry.action === 'share_link.created');
      expect(creation.actor).toMatchObject({ type: 'user', name: 'Ed Itor' });
      expect(JSON.stringify(audit.body)).not.toContain(created.body.url.split('/').pop());
    });

    it('the link opens nothing else: not as a key, not as a cookie, not on another path', async () => {
      const created = await server().request('POST', `/v1/experiments/${shared.experiment.id}/share-links`, { key, body: {} });
      const token = created.body.url.split('/').pop();
      expect((await server().request('GET', '/v1/experiments', { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
      expect((await server().request('GET', '/v1/experiments', { headers: { cookie: `verdict_session=${token}` } })).status).toBe(401);
      expect((await server().request('GET', `/v1/experiments/${other.experiment.id}/results`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(
        401,
      );
      expect((await server().request('GET', `/v1/shared/vd_shr_${'x'.repeat(43)}`)).status).toBe(404);
    });

    it('stops working when revoked (410) and when expired (410); a viewer cannot share or revoke', async () => {
      const revoked = await server().request('POST', `/v1/experiments/${shared.experiment.id}/share-links`, {
        headers: editor.change,
        body: { expires_in_days: 1 },
      });
      expect((await fetch(revoked.body.url)).status).toBe(200);
      expect((await server().request('DELETE', `/v1/share-links/${revoked.body.id}`, { headers: viewer.change })).status).toBe(403);
      expect((await server().request('DELETE', `/v1/share-links/${revoked.body.id}`, { headers: editor.change })).status).toBe(204);
      const gone = await fetch(revoked.body.url);
      expect(gone.status).toBe(410);
      expect((await fetch(revoked.body.url, { headers: { accept: 'text/html' } })).status).toBe(410);
      expect(gone.headers.get('content-type')).toMatch(/application\/problem\+json/);

      const expiring = await server().request('POST', `/v1/experiments/${shared.experiment.id}/share-links`, { key, body: { expires_in_days: 1 } });
      expect((await fetch(expiring.body.url)).status).toBe(200);
      clock.advance(DAY + 1);
      expect((await fetch(expiring.body.url)).status).toBe(410);
      // Back to now: the people's 12-hour sessions would have ended a day later too.
      clock.advance(-(DAY + 1));
      expect((await fetch(expiring.body.url)).status).toBe(200);
      clock.advance(DAY + 1);
      const listedLater = await server().request('GET', `/v1/experiments/${shared.experiment.id}/share-links`, { key });
      expect(listedLater.body.data.find((link: { id: string }) => link.id === expiring.body.id).status).toBe('expired');
      clock.advance(-(DAY + 1));
      const listed = await server().request('GET', `/v1/experiments/${shared.experiment.id}/share-links`, { headers: viewer.read });
      const statuses = Object.fromEntries(listed.body.data.map((link: { id: string; status: string }) => [link.id, link.status]));
      expect(statuses[revoked.body.id]).toBe('revoked');
      expect((await server().request('POST', `/v1/experiments/${shared.experiment.id}/share-links`, { headers: viewer.change, body: {} })).status).toBe(403);
    });

    it('refuses a lifetime outside 1 to 90 days with a problem naming the field', async () => {
      for (const days of [0, 91, 1.5]) {
        const refused = await server().request('POST', `/v1/experiments/${shared.experiment.id}/share-links`, { key, body: { expires_in_days: days } });
        expect(refused.status).toBe(422);
        expect(JSON.stringify(refused.body.errors)).toContain('expires_in_days');
      }
    });

    it('exports the latest results as CSV: a row per variant with the snapshot’s numbers', async () => {
      const exported = await server().request('GET', `/v1/experiments/${shared.experiment.id}/results/export?format=csv`, { headers: viewer.read });
      expect(exported.status).toBe(200);
      expect(exported.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      const [header, ...all] = parseCsv(exported.text);
      expect(header?.slice(0, 6)).toEqual(['snapshot_id', 'computed_at', 'metric_role', 'metric_key', 'metric_name', 'variant_key']);
      // The whole experiment's rows have no dimension; the breakdowns' rows follow them.
      const rows = all.filter((row) => row[(header as string[]).indexOf('dimension')] === '');
      expect(rows).toHaveLength(shared.snapshot.per_variant.length);
      const treatment = rows.find((row) => row[5] === 'treatment') as string[];
      const expected = shared.snapshot.per_variant.find((v: { variant_key: string }) => v.variant_key === 'treatment');
      const column = (name: string) => treatment[(header as string[]).indexOf(name)];
      expect(Number(column('sample_size'))).toBe(expected.sample_size);
      expect(Number(column('effect_absolute'))).toBe(expected.effect.absolute.mean);
      expect(Number(column('effect_absolute_ci_high'))).toBe(expected.effect.absolute.credible_interval_95[1]);
    });

    it('exports the history as CSV, one block of rows per snapshot', async () => {
      const second = await server().request('POST', `/v1/experiments/${shared.experiment.id}/results/compute`, { key });
      expect(second.status).toBe(201);
      const exported = await server().request('GET', `/v1/experiments/${shared.experiment.id}/results/history/export?format=csv`, { key });
      expect(exported.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      const snapshotIds = new Set(
        parseCsv(exported.text)
          .slice(1)
          .map((row) => row[0]),
      );
      expect(snapshotIds).toEqual(new Set([shared.snapshot.id, second.body.id]));
      expect((await server().request('GET', `/v1/experiments/${shared.experiment.id}/results/history/export?format=xlsx`, { key })).status).toBe(400);
    });

    it('exports statistics and a Python script that recomputes every interval and effect with SciPy', async () => {
      const exported = await server().request('GET', `/v1/experiments/${shared.experiment.id}/results/export?format=notebook`, { headers: viewer.read });
      expect(exported.status).toBe(200);
      expect(exported.body.metrics[0]).toMatchObject({ role: 'primary', model: 'normal' });
      const run = runNotebook(exported.body);
      expect(run.output).toContain('all numbers recomputed');
      expect(run.status, run.output).toBe(0);
      // The script does compare: a changed number fails it.
      const tampered = structuredClone(exported.body);
      tampered.metrics[0].variants[1].reported.effect.absolute.mean += 0.01;
      const failed = runNotebook(tampered);
      expect(failed.status).toBe(1);
      expect(failed.output).toContain('BAD');
    }, 120_000);
  },
  { clock },
);
