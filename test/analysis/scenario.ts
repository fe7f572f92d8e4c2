/**
 * The end-to-end scenario whose expected snapshot scripts/reference/analysis_e2e.py computes with
 * SciPy (the numbers are in end-to-end.test.ts). The script replays the same data in Python;
 * change both together and re-run the script.
 *
 * Unit i of a variant is exposed at T0. Events are given as offsets from T0 and the phase in
 * which the test sends them: the clock stands at T0 + 3 d (A), T0 + 9 d (B) or T0 + 17 d (C), so
 * only phase C events are late (received 7 to 30 days after they occurred).
 */
import { DAY, HOUR, MINUTE } from './support.js';

export type Phase = 'A' | 'B' | 'C';
export const PHASE_CLOCK: Record<Phase, number> = { A: 3 * DAY, B: 9 * DAY, C: 17 * DAY };
export const UNITS = { control: 200, treatment: 210 } as const;
export type ScenarioVariant = keyof typeof UNITS;

export interface PlannedEvent {
  event_key: string;
  offset: number;
  properties: Record<string, unknown>;
  phase: Phase;
}

function purchases(variant: ScenarioVariant, i: number): PlannedEvent[] {
  const converts = variant === 'control' ? i % 10 === 0 : i % 5 === 0;
  const events: PlannedEvent[] = [];
  if (converts) {
    for (let k = 0; k < 1 + (i % 3); k += 1) {
      let total: unknown = 10 + (i % 7) * 5 + k * 0.25;
      // Not numbers: the purchase converts (binary) but adds nothing to revenue.
      if (k === 0 && i % 20 === 0) total = String(total);
      if (k === 0 && i % 30 === 10) total = true;
      events.push({ event_key: 'purchase', offset: (k + 1) * HOUR, properties: { order: { total } }, phase: 'A' });
    }
  }
  // Outside the 7-day window, and before the exposure: neither counts.
  if (i % 4 === 1) events.push({ event_key: 'purchase', offset: 8 * DAY, properties: { order: { total: 50 } }, phase: 'B' });
  if (i % 6 === 2) events.push({ event_key: 'purchase', offset: -HOUR, properties: { order: { total: 40 } }, phase: 'A' });
  // Late (received 8 days after it occurred) and outside the window: only late_event_count sees it.
  if (i % 25 === 3) events.push({ event_key: 'purchase', offset: 9 * DAY, properties: { order: { total: 70 } }, phase: 'C' });
  return events;
}

function pageLoads(variant: ScenarioVariant, i: number): PlannedEvent[] {
  if (i % 2 !== 0) return [];
  const events: PlannedEvent[] = [];
  for (let k = 0; k < 1 + (i % 4); k += 1) {
    const load = 100 + (i % 13) * 10 + k * 3 - (variant === 'treatment' ? 5 : 0);
    events.push({ event_key: 'page_load', offset: 30 * MINUTE + k * MINUTE, properties: { timing: { 'load ms': load } }, phase: 'A' });
  }
  // Inside the 7-day pageviews window, outside the 1-day load_time window.
  events.push({ event_key: 'page_load', offset: 2 * DAY, properties: { timing: { 'load ms': 999 } }, phase: 'A' });
  return events;
}

export function plannedEvents(variant: ScenarioVariant, i: number): PlannedEvent[] {
  return [...purchases(variant, i), ...pageLoads(variant, i)];
}
