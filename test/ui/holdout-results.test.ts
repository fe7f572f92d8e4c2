import { describe, expect, it } from 'vitest';
import { HOUR, ManualClock, createExperiment, createMetric, sendEvents } from '../analysis/support.js';
import { answersFor, heldOut, unitIds } from '../holdouts/support.js';
import { useAdminUi } from './admin-ui.js';
import { chromiumAvailable, screenshot } from './browser-support.js';

// A holdout's own results in the admin UI (issue #57): its metrics chosen on its page, a snapshot
// computed there, the scorecard of held-out units against the sample, and the launches on a timeline.

const clock = new ManualClock();

describe.skipIf(!chromiumAvailable())('admin UI in Chromium: a holdout’s results', () => {
  const ui = useAdminUi({ clock, jobs: false });

  it('measures the chosen metric on the held-out units against the sample, and shows the launches on a timeline', async () => {
    const { page } = ui.browser;
    await createMetric(ui.server, ui.boot.key, { key: 'signed_up', name: 'Sign-ups', event_key: 'signup', kind: 'binary', unit_dedup_window: 'PT30M' });
    const created = await ui.server.request('POST', '/v1/holdouts', {
      key: ui.boot.key,
      body: { name: 'Q4 holdout', unit_type: 'user', environment_id: ui.boot.environmentId, percent: 20 },
    });
    const holdoutId = created.body.id as string;
    await ui.server.request('POST', `/v1/holdouts/${holdoutId}/start`, { key: ui.boot.key });
    const experiment = await createExperiment(ui.server, ui.boot.key, {
      environment_id: ui.boot.environmentId,
      key: 'onboarding',
      name: 'Onboarding',
      variants: [
        { key: 'control', weight: 50, is_control: true },
        { key: 'treatment', weight: 50 },
      ],
    });
    const units = unitIds('visitor', 400);
    const held = new Set(heldOut(await answersFor(ui.server, ui.boot.key, 'onboarding', units)));
    // Everyone else signs up seven times as often as the held-out units (70% against 10%): the
    // holdout's salt is random, so which units it keeps out differs from run to run, and the lift
    // must read as better whichever they are (about 80 units a group).
    const signups = units.filter((unit, index) => (held.has(unit) ? index % 10 === 0 : index % 10 < 7));
    await sendEvents(
      ui.server,
      ui.boot.key,
      signups.map((unit_id) => ({ event_key: 'signup', unit_id, occurred_at: clock.now() + 60_000 })),
    );
    await ui.server.request('POST', `/v1/experiments/${experiment.id}/stop`, { key: ui.boot.key, body: { reason: 'won' } });
    await ui.server.request('POST', `/v1/experiments/${experiment.id}/launch`, { key: ui.boot.key, body: { variant_key: 'treatment' } });
    clock.advance(HOUR);

    await page.goto(ui.at(`/holdouts/${holdoutId}`));
    await page.getByTestId('holdout-results').getByText('No results yet.').waitFor();
    await page.getByLabel('Sign-ups').check();
    await page.getByRole('button', { name: 'Save metrics' }).click();
    await expect.poll(async () => (await ui.server.request('GET', `/v1/holdouts/${holdoutId}`, { key: ui.boot.key })).body.metric_ids.length).toBe(1);
    await page.getByRole('button', { name: 'Compute results now' }).click();
    const row = page.getByTestId('holdout-metric-signed_up');
    await row.waitFor();

    const snapshot = (await ui.server.request('GET', `/v1/holdouts/${holdoutId}/results`, { key: ui.boot.key })).body;
    const [heldOutGroup, sampleGroup] = snapshot.metrics[0].per_group;
    expect(heldOutGroup.sample_size).toBe(held.size);
    const cells = await row.locator('td').allInnerTexts();
    expect(cells[0]).toBe(`${(heldOutGroup.observed_rate * 100).toFixed(2)}%`);
    expect(cells[1]).toBe(`${(sampleGroup.observed_rate * 100).toFixed(2)}%`);
    await expect(page.getByTestId('holdout-lift-signed_up').getAttribute('data-reading')).resolves.toBe('better');
    await expect(page.getByTestId('holdout-groups').innerText()).resolves.toContain(`held out ${held.size} units · sample ${sampleGroup.sample_size} units`);
    await expect(page.getByTestId('timeline-launch').allInnerTexts()).resolves.toEqual([expect.stringMatching(/: onboarding launched treatment$/)]);
    await screenshot(page, 'holdout-results');
  }, 240_000);
});
