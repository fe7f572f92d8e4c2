import { describe, expect, it } from 'vitest';
import { compute, createExperiment, createMetric, exposeExactly, sendEvents } from '../analysis/support.js';
import { chromiumAvailable, screenshot } from './browser-support.js';
import { useSignedInUi } from './signed-in-ui.js';

// Stopping records the right outcome (issue #52, item 3): the stop dialog starts from the latest
// recommendation, asks for the winner of a win, says which checks disagree with the choice, and a
// stopped experiment never reads "Keep running".

describe.skipIf(!chromiumAvailable())('admin UI in Chromium: the stop dialog starts from the recommendation', () => {
  let signups = '';
  let errors = '';

  const ui = useSignedInUi('Stop Co', async ({ server, boot }) => {
    signups = await createMetric(server, boot.key, { key: 'signed_up', name: 'Sign-ups', event_key: 'signup', kind: 'binary' });
    errors = await createMetric(server, boot.key, { key: 'errors', name: 'Error rate', event_key: 'error', kind: 'binary', higher_is_better: false });
  });

  /** A running two-arm experiment, 100 units each, with the given sign-ups and errors per arm, and one snapshot. */
  async function experimentWith(key: string, counts: { signups: [number, number]; errors: [number, number] }) {
    const experiment = await createExperiment(ui.server, ui.boot.key, {
      environment_id: ui.boot.environmentId,
      key,
      name: `Checkout ${key}`,
      primary_metric_id: signups,
      guardrail_metric_ids: [errors],
      decision_rule: { method: 'bayesian.posterior_threshold', posterior_threshold: 0.95, min_sample_per_variant: 50 },
      variants: [
        { key: 'control', weight: 50, is_control: true },
        { key: 'treatment', weight: 50 },
      ],
    });
    const units = await exposeExactly(ui.server, ui.boot.key, experiment, { control: 100, treatment: 100 }, key);
    const now = Date.now();
    const events = (['control', 'treatment'] as const).flatMap((variant, arm) =>
      (units[variant] ?? []).flatMap((unit_id, i) => [
        ...(i < counts.signups[arm]! ? [{ event_key: 'signup', unit_id, occurred_at: now }] : []),
        ...(i < counts.errors[arm]! ? [{ event_key: 'error', unit_id, occurred_at: now }] : []),
      ]),
    );
    await sendEvents(ui.server, ui.boot.key, events);
    const snapshot = await compute(ui.server, ui.boot.key, experiment.id);
    return { experiment, snapshot };
  }

  it('pre-selects "lost" for a rollback, asks for the winner of a win and says which checks disagree', async () => {
    const { page } = ui.browser;
    // The treatment is level on sign-ups (a chance to beat control near 50%, an interval spanning
    // zero) and makes errors much worse: the recommendation rolls it back.
    const { experiment, snapshot } = await experimentWith('harmful', { signups: [30, 31], errors: [5, 60] });
    expect(snapshot.decision.recommendation).toMatchObject({ action: 'rollback', variant_key: 'treatment' });
    await page.goto(`${ui.server.url}/ui/experiments/${experiment.id}`);
    await page.getByRole('button', { name: 'Stop…' }).click();
    const form = page.getByTestId('stop-form');
    await form.getByTestId('stop-recommendation').waitFor();
    await expect(form.getByTestId('stop-recommendation').innerText()).resolves.toBe('The latest snapshot recommends: roll back treatment.');
    await expect(page.getByLabel('Outcome', { exact: true }).inputValue()).resolves.toBe('lost');
    await expect(form.getByTestId('stop-disagreements').count()).resolves.toBe(0);
    await expect(page.getByLabel('Winning variant').count()).resolves.toBe(0);

    await page.getByLabel('Outcome', { exact: true }).selectOption('won');
    await expect(page.getByRole('button', { name: 'Stop experiment' }).isDisabled()).resolves.toBe(true);
    await page.getByLabel('Winning variant').selectOption('treatment');
    const disagreements = await form.getByTestId('stop-disagreements').locator('li').allInnerTexts();
    expect(disagreements[0]).toBe('The latest recommendation is “roll back treatment”, not this outcome.');
    expect(disagreements.some((text) => /^The 95% interval of treatment’s effect \(.+ to .+\) spans zero/.test(text))).toBe(true);
    expect(disagreements.some((text) => /^treatment’s chance to beat the control \(.+\) is below the 95% the rule asks of a winner\.$/.test(text))).toBe(true);
    await screenshot(page, 'stop-dialog-disagreements');

    await page.getByLabel('Outcome', { exact: true }).selectOption('lost');
    await page.getByRole('button', { name: 'Stop experiment' }).click();
    await page.getByTestId('stopped-by').waitFor();
    const stored = await ui.server.request('GET', `/v1/experiments/${experiment.id}`, { key: ui.boot.key });
    expect(stored.body).toMatchObject({ status: 'stopped', stop_reason: 'lost', outcome_notes: null });
  });

  it('pre-selects "won" with the recommended variant for a ship, and records the winner', async () => {
    const { page } = ui.browser;
    const { experiment, snapshot } = await experimentWith('winner', { signups: [20, 80], errors: [5, 5] });
    expect(snapshot.decision.recommendation).toMatchObject({ action: 'ship', variant_key: 'treatment' });
    await page.goto(`${ui.server.url}/ui/experiments/${experiment.id}`);
    await page.getByRole('button', { name: 'Stop…' }).click();
    await page.getByTestId('stop-recommendation').waitFor();
    await expect(page.getByLabel('Outcome', { exact: true }).inputValue()).resolves.toBe('won');
    await expect(page.getByLabel('Winning variant').inputValue()).resolves.toBe('treatment');
    await expect(page.getByTestId('stop-disagreements').count()).resolves.toBe(0);
    await page.getByRole('button', { name: 'Stop experiment' }).click();
    await page.getByTestId('stopped-by').waitFor();
    const stored = await ui.server.request('GET', `/v1/experiments/${experiment.id}`, { key: ui.boot.key });
    expect(stored.body).toMatchObject({ status: 'stopped', stop_reason: 'won', outcome_notes: 'Winner: treatment.' });
  });

  it('chooses nothing while the recommendation is to keep running, and a stopped experiment never reads "Keep running"', async () => {
    const { page } = ui.browser;
    const { experiment, snapshot } = await experimentWith('undecided', { signups: [30, 33], errors: [5, 5] });
    expect(snapshot.decision.recommendation.action).toBe('keep_running');
    await page.goto(`${ui.server.url}/ui/experiments/${experiment.id}`);
    await page.getByRole('button', { name: 'Stop…' }).click();
    await page.getByTestId('stop-recommendation').waitFor();
    await expect(page.getByLabel('Outcome', { exact: true }).inputValue()).resolves.toBe('');
    await page.getByLabel('Outcome', { exact: true }).selectOption('business');
    await page.getByRole('button', { name: 'Stop experiment' }).click();
    await page.getByTestId('stopped-by').waitFor();

    await page.goto(`${ui.server.url}/ui/experiments/${experiment.id}/results`);
    await expect(page.getByTestId('recommendation').innerText()).resolves.toBe('Inconclusive');
    await page.goto(`${ui.server.url}/ui/experiments`);
    const row = page.getByRole('row').filter({ hasText: 'Checkout undecided' });
    await expect(row.getByTestId('list-recommendation').innerText()).resolves.toBe('Inconclusive');
    // The rolled-back experiment names the variant it takes away, not "roll back to" it.
    const harmful = page.getByRole('row').filter({ hasText: 'Checkout harmful' });
    await expect(harmful.getByTestId('list-recommendation').innerText()).resolves.toBe('Roll back treatment');
  });
});
