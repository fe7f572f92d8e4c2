import { beforeAll, describe, expect, it } from 'vitest';
import { useAdminUi } from './admin-ui.js';
import { chromiumAvailable, screenshot, sendTraffic } from './browser-support.js';

// End to end through Debian's Chromium: a person signs in with the bootstrap key, creates and
// starts an experiment, opens its results (one peek), and stops it with a reason. Screenshots of
// the main pages land in test-results/ui/. Each test sets up what it needs (a session, an
// experiment of its own in the state it starts from), so any one of them runs alone.

describe.skipIf(!chromiumAvailable())('admin UI in Chromium', () => {
  const ui = useAdminUi();
  let purchasesId = '';
  let experimentsMade = 0;

  beforeAll(async () => {
    const metric = await ui.server.request('POST', '/v1/metrics', {
      key: ui.boot.key,
      body: { key: 'purchases', name: 'Purchases', event_key: 'purchase', kind: 'binary' },
    });
    expect(metric.status).toBe(201);
    purchasesId = metric.body.id;
  });

  /** A running experiment of the test's own, made through the API (the form has a test of its own). */
  async function runningExperiment(): Promise<{ id: string; key: string }> {
    experimentsMade += 1;
    const key = `checkout-${Date.now()}-${experimentsMade}`;
    const created = await ui.server.request('POST', '/v1/experiments', {
      key: ui.boot.key,
      body: {
        environment_id: ui.boot.environmentId,
        key,
        name: 'Green checkout button',
        hypothesis: 'A green button makes more people buy',
        unit_type: 'user',
        primary_metric_id: purchasesId,
        variants: [
          { key: 'control', weight: 50 },
          { key: 'treatment', weight: 50 },
        ],
      },
    });
    if (created.status !== 201) throw new Error(`creating an experiment failed: ${created.text}`);
    const started = await ui.server.request('POST', `/v1/experiments/${created.body.id}/start`, { key: ui.boot.key });
    if (started.status !== 200) throw new Error(`starting the experiment failed: ${started.text}`);
    return { id: created.body.id as string, key };
  }

  /** A running experiment with one snapshot computed from 200 units (computed with the key: no peek). */
  async function experimentWithResults(): Promise<{ id: string; key: string }> {
    const experiment = await runningExperiment();
    await sendTraffic(ui.server, ui.boot.key, experiment.key, 0, 200);
    const computed = await ui.server.request('POST', `/v1/experiments/${experiment.id}/results/compute`, { key: ui.boot.key });
    if (computed.status !== 201) throw new Error(`computing results failed: ${computed.text}`);
    return experiment;
  }

  async function openExperiment(id: string): Promise<void> {
    await ui.browser.page.goto(ui.at(`/experiments/${id}`));
    await ui.browser.page.getByRole('link', { name: 'View results' }).waitFor();
  }

  async function openResults(id: string): Promise<void> {
    await ui.browser.page.goto(ui.at(`/experiments/${id}/results`));
    await ui.browser.page.getByTestId('decision-header').waitFor();
  }

  it('answers /ui with the app and signs in with the bootstrap key', async () => {
    const { page } = ui.browser;
    await ui.browser.context.clearCookies();
    await page.goto(ui.at('/'));
    // The app asks the server for its session before it shows the sign-in form: wait for it.
    await page.getByRole('heading', { name: 'Sign in to Verdict' }).waitFor({ state: 'visible' });
    await page.getByLabel('Server API key').fill('vd_srv_all_notarealkeynotarealkeynotarealkeynotareal');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    await screenshot(page, '01-sign-in');
    await page.getByLabel('Server API key').fill(ui.boot.key);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Experiments' }).waitFor();
    const cookie = (await ui.browser.context.cookies()).find((c) => c.name === 'verdict_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
    expect(await page.evaluate('document.cookie')).not.toContain('verdict_session');
  });

  it('is keyboard-usable: the first Tab reaches the skip link, which jumps to the content', async () => {
    const { page } = ui.browser;
    await page.goto(ui.at('/experiments'));
    await page.getByRole('heading', { name: 'Experiments' }).waitFor();
    await page.keyboard.press('Tab');
    expect(await page.locator(':focus').textContent()).toBe('Skip to content');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    expect(await page.locator('main :focus').count()).toBe(1);
  });

  it('creates an experiment through the form and starts it', async () => {
    const { page } = ui.browser;
    const experimentKey = `checkout-${Date.now()}`;
    await page.goto(ui.at('/experiments'));
    await page.getByRole('link', { name: 'New experiment' }).click();
    await page.getByLabel('Key', { exact: true }).fill(experimentKey);
    await page.getByLabel('Name', { exact: true }).fill('Green checkout button');
    await page.getByLabel('Hypothesis').fill('A green button makes more people buy');
    await page.getByLabel('Primary metric').selectOption({ label: 'Purchases (binary)' });
    await screenshot(page, '03-experiment-new');
    await page.getByRole('button', { name: 'Create experiment' }).click();
    await page.getByRole('button', { name: 'Start experiment' }).click();
    await page.getByRole('link', { name: 'View results' }).waitFor();
    const experimentId = page.url().split('/').pop() ?? '';
    const stored = await ui.server.request('GET', `/v1/experiments/${experimentId}`, { key: ui.boot.key });
    expect(stored.body).toMatchObject({ key: experimentKey, status: 'running' });
    await screenshot(page, '04-experiment-running');
  });

  it('edits the name, hypothesis and audience of the running experiment, and names a bad audience', async () => {
    const { page } = ui.browser;
    const { id: experimentId } = await runningExperiment();
    await openExperiment(experimentId);
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('button', { name: 'Edit as JSON' }).click();
    await page.getByLabel('Audience (JSON)').fill('{"attribute": "country", "op": "in", "value": ["DE"]');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('The audience is not valid JSON').waitFor();
    await page.getByLabel('Audience (JSON)').fill('{"attribute": "country", "op": "between", "value": 1}');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page
      .locator('.rule-builder .field-error')
      .getByText(/unknown op 'between'/)
      .waitFor();
    await page.getByLabel('Experiment name').fill('Green checkout button (EU)');
    await page.getByLabel('Audience (JSON)').fill('{"attribute": "country", "op": "in", "value": ["DE", "FR"]}');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { name: /Green checkout button \(EU\)/ }).waitFor();
    const stored = await ui.server.request('GET', `/v1/experiments/${experimentId}`, { key: ui.boot.key });
    expect(stored.body).toMatchObject({
      name: 'Green checkout button (EU)',
      status: 'running',
      audience: { attribute: 'country', op: 'in', value: ['DE', 'FR'] },
    });
    const audit = await ui.server.request('GET', `/v1/audit?target_id=${experimentId}&action=experiment.updated`, { key: ui.boot.key });
    expect(audit.body.data.length).toBeGreaterThanOrEqual(1);
    await page.getByTestId('experiment-summary').getByText('country is one of “DE”, “FR”').waitFor();
    // Back to everyone, from the builder this time.
    await page.getByRole('group', { name: 'Details' }).getByRole('button', { name: 'Remove', exact: true }).click();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByTestId('experiment-summary').getByText('Everyone').waitFor();
    expect((await ui.server.request('GET', `/v1/experiments/${experimentId}`, { key: ui.boot.key })).body.audience).toBeNull();
  });

  it('edits the decision rule of the running experiment', async () => {
    const { page } = ui.browser;
    const { id: experimentId } = await runningExperiment();
    await openExperiment(experimentId);
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const form = page.getByRole('group', { name: 'Decision rule' });
    const save = page.getByRole('button', { name: 'Save changes' });
    expect(await save.isDisabled()).toBe(true);
    await form.getByLabel('Method').selectOption('frequentist.sequential_msprt');
    // Percentages as a person types them: the API's 0.995 shows as 99.5, and 99 is sent as 0.99.
    await expect(form.getByLabel('Threshold (%)').inputValue()).resolves.toBe('99.5');
    await expect(form.getByLabel('Minimum detectable effect (%)').inputValue()).resolves.toBe('2');
    await form.getByLabel('Threshold (%)').fill('99');
    await form.getByLabel('Minimum units per variant').fill('150');
    await save.click();
    await page.getByTestId('experiment-summary').getByText('Frequentist sequential test, mSPRT (safe to check any time)').waitFor();
    await expect
      .poll(async () => (await ui.server.request('GET', `/v1/experiments/${experimentId}`, { key: ui.boot.key })).body.decision_rule)
      .toMatchObject({
        method: 'frequentist.sequential_msprt',
        posterior_threshold: 0.99,
        min_sample_per_variant: 150,
        minimum_detectable_effect: 0.02,
      });
    const audit = await ui.server.request('GET', `/v1/audit?target_id=${experimentId}&action=experiment.updated`, { key: ui.boot.key });
    expect(audit.body.data[0].payload.changes.decision_rule.to).toMatchObject({ method: 'frequentist.sequential_msprt', posterior_threshold: 0.99 });
  });

  it('edits the metrics of a draft, and offers no metrics editor once an experiment runs', async () => {
    const { page } = ui.browser;
    const { id: experimentId } = await runningExperiment();
    await openExperiment(experimentId);
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('group', { name: 'Details' }).waitFor();
    expect(await page.getByRole('group', { name: 'Metrics' }).count()).toBe(0);
    const guard = await ui.server.request('POST', '/v1/metrics', {
      key: ui.boot.key,
      body: { key: 'refunds', name: 'Refunds', event_key: 'refund', kind: 'binary' },
    });
    const primary = (await ui.server.request('GET', '/v1/metrics', { key: ui.boot.key })).body.data.find((m: { key: string }) => m.key === 'purchases');
    const draft = await ui.server.request('POST', '/v1/experiments', {
      key: ui.boot.key,
      body: {
        environment_id: ui.boot.environmentId,
        key: `draft-${Date.now()}`,
        name: 'Draft metrics',
        hypothesis: 'h',
        unit_type: 'user',
        variants: [
          { key: 'control', weight: 50 },
          { key: 'treatment', weight: 50 },
        ],
      },
    });
    expect(draft.status).toBe(201);
    await page.goto(ui.at(`/experiments/${draft.body.id}`));
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const form = page.getByRole('group', { name: 'Metrics' });
    await form.getByLabel('Primary metric').selectOption(primary.id);
    await form.getByLabel('Refunds').check();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect
      .poll(async () => (await ui.server.request('GET', `/v1/experiments/${draft.body.id}`, { key: ui.boot.key })).body)
      .toMatchObject({ primary_metric_id: primary.id, guardrail_metric_ids: [guard.body.id] });
    // Reloaded from the server: the stored choice is shown and there is nothing left to save.
    await expect.poll(() => page.getByRole('button', { name: 'Save changes' }).isDisabled()).toBe(true);
    expect(await form.getByLabel('Refunds').isChecked()).toBe(true);
    await page.goto(ui.at(`/experiments/${experimentId}`));
    await page.getByRole('link', { name: 'View results' }).waitFor();
  });

  it('opens results once: header, scorecard, history, details, and exactly one peek', async () => {
    const { page } = ui.browser;
    const { id: experimentId, key: experimentKey } = await runningExperiment();
    await openExperiment(experimentId);
    await sendTraffic(ui.server, ui.boot.key, experimentKey, 0, 200);
    const first = await ui.server.request('POST', `/v1/experiments/${experimentId}/results/compute`, { key: ui.boot.key });
    expect(first.status, first.text).toBe(201);
    await sendTraffic(ui.server, ui.boot.key, experimentKey, 200, 400);
    const second = await ui.server.request('POST', `/v1/experiments/${experimentId}/results/compute`, { key: ui.boot.key });
    expect(second.body.peek_count_at_computation).toBe(0);

    await page.getByRole('link', { name: 'View results' }).click();
    await page.getByTestId('decision-header').waitFor();
    await page.getByTestId('history-chart').waitFor();
    expect(await page.getByTestId('recommendation').textContent()).toMatch(/^(Ship treatment|Keep running|Investigate|No difference|Roll back)$/);
    await page.getByTestId('scorecard-row-purchases').getByRole('link', { name: 'Purchases' }).waitFor();
    await page.getByTestId('details-purchases').locator('summary').click();
    expect(await page.getByTestId('interval-chart').locator('circle.interval-mean').count()).toBe(2);
    expect(await page.getByRole('table', { name: 'Purchases: posterior per variant' }).textContent()).toContain('control');
    await screenshot(page, '05-results');

    const peeks = await ui.server.request('GET', `/v1/audit?action=experiment.results_peeked&target_id=${experimentId}`, { key: ui.boot.key });
    expect(peeks.body.data).toHaveLength(1);
    expect(peeks.body.data[0].actor_id).toBe(ui.boot.keyId);
    const next = await ui.server.request('POST', `/v1/experiments/${experimentId}/results/compute`, { key: ui.boot.key });
    expect(next.body.peek_count_at_computation).toBe(1);
  });

  it('logs no peek when results are read with a bearer key', async () => {
    const { id: experimentId } = await experimentWithResults();
    await openResults(experimentId); // the one peek: a page open through the session
    const read = await ui.server.request('GET', `/v1/experiments/${experimentId}/results`, { key: ui.boot.key });
    expect(read.status).toBe(200);
    const peeks = await ui.server.request('GET', `/v1/audit?action=experiment.results_peeked&target_id=${experimentId}`, { key: ui.boot.key });
    expect(peeks.body.data).toHaveLength(1);
  });

  it('is readable on a narrow screen', async () => {
    const { page } = ui.browser;
    await openResults((await experimentWithResults()).id);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.getByTestId('decision-header').waitFor();
    // Runs in the page (a string, as this file is type-checked without the DOM library).
    const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, '06-results-narrow');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('looks up a unit, pins it to a variant, removes the pin and re-buckets it', async () => {
    const { page } = ui.browser;
    const { id: experimentId, key: experimentKey } = await runningExperiment();
    const assign = async () =>
      (await ui.server.request('POST', '/v1/assign', { key: ui.boot.key, body: { experiment_key: experimentKey, unit_id: 'qa unit/1' } })).body;
    const bucketed = await assign();
    await page.goto(ui.at(`/experiments/${experimentId}`));
    await page.getByLabel('Unit id').fill('qa unit/1');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByText(`qa unit/1 is in "${bucketed.variant}" (bucketed by its unit id)`).waitFor();

    const other = bucketed.variant === 'control' ? 'treatment' : 'control';
    await page.getByLabel('Variant to pin').selectOption(other);
    await page.getByRole('button', { name: 'Pin to variant' }).click();
    await page.getByText(`qa unit/1 is pinned to "${other}"`).waitFor();
    expect(await assign()).toMatchObject({ variant: other, reason: 'forced' });
    await screenshot(page, '05b-experiment-units');

    await page.getByRole('button', { name: 'Remove pin' }).click();
    await page.getByText('The pin of qa unit/1 is removed').waitFor();
    expect(await assign()).toMatchObject({ variant: bucketed.variant, reason: 'bucketed' });

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Re-bucket' }).click();
    await page.getByText('qa unit/1 was re-bucketed').waitFor();
    const audit = await ui.server.request('GET', `/v1/audit?action=assignment.rebucketed&target_id=${experimentId}`, { key: ui.boot.key });
    expect(audit.body.data).toHaveLength(1);
    expect(audit.body.data[0].payload).toMatchObject({ unit_id: 'qa unit/1', previous_variant: bucketed.variant, superseded_exposures: 1 });
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByText('qa unit/1 has no stored assignment in this experiment').waitFor();
  });

  it('stops the experiment with an outcome, asking for the winning variant of a win', async () => {
    const { page } = ui.browser;
    const { id: experimentId } = await runningExperiment();
    await page.goto(ui.at(`/experiments/${experimentId}`));
    await page.getByRole('button', { name: 'Stop…' }).click();
    // Without a snapshot there is no recommendation to start from: nothing is chosen.
    await expect(page.getByLabel('Outcome', { exact: true }).inputValue()).resolves.toBe('');
    await expect(page.getByRole('button', { name: 'Stop experiment' }).isDisabled()).resolves.toBe(true);
    await page.getByLabel('Outcome', { exact: true }).selectOption('won');
    await expect(page.getByRole('button', { name: 'Stop experiment' }).isDisabled()).resolves.toBe(true);
    const winner = await page.getByLabel('Winning variant').locator('option').allTextContents();
    expect(winner).not.toContain('control');
    await page.getByLabel('Winning variant').selectOption({ index: 1 });
    const chosen = await page.getByLabel('Winning variant').inputValue();
    await page.getByLabel('Outcome notes (optional)').fill('Shipped the green button');
    await page.getByRole('button', { name: 'Stop experiment' }).click();
    await page
      .getByText('Archived: nothing more can change.')
      .or(page.getByRole('button', { name: 'Archive' }))
      .first()
      .waitFor();
    const stored = await ui.server.request('GET', `/v1/experiments/${experimentId}`, { key: ui.boot.key });
    expect(stored.body).toMatchObject({ status: 'stopped', stop_reason: 'won', outcome_notes: `Winner: ${chosen}. Shipped the green button` });
    await screenshot(page, '07-experiment-stopped');
  });

  it('shows the other main pages', async () => {
    const { page } = ui.browser;
    const pages: [string, string, string][] = [
      ['/experiments', 'Experiments', '02-experiments'],
      ['/metrics', 'Metrics', '08-metrics'],
      ['/mutex-groups', 'Mutex groups', '09-mutex-groups'],
      ['/templates', 'Templates', '12-templates'],
      ['/webhook-sources', 'Webhook sources', '14-webhook-sources'],
    ];
    for (const [path, heading, name] of pages) {
      await page.goto(ui.at(path));
      await page.getByRole('heading', { name: heading, exact: true }).waitFor();
      await page.waitForLoadState('networkidle');
      await screenshot(page, name);
    }
  });

  it('filters the audit log', async () => {
    const { page } = ui.browser;
    const { id: experimentId } = await experimentWithResults();
    await openResults(experimentId);
    await page.reload();
    await page.getByTestId('decision-header').waitFor();
    await page.goto(ui.at('/audit'));
    await page.getByLabel('Action').fill('experiment.results_peeked');
    await page.getByLabel('Target id').fill(experimentId);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/action=experiment.results_peeked/);
    await page.getByRole('table', { name: 'Audit entries' }).waitFor();
    // Two page opens of this experiment's results: the first visit and the reload.
    expect(await page.getByRole('table', { name: 'Audit entries' }).locator('tbody tr').count()).toBe(2);
    await screenshot(page, '11-audit');
  });

  it('signs out', async () => {
    const { page } = ui.browser;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Verdict' }).waitFor();
    expect((await ui.browser.context.cookies()).find((c) => c.name === 'verdict_session')).toBeUndefined();
  });
});
