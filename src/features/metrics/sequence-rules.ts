/**
 * The rules of funnel and retention metrics (docs/metrics.md "Funnel metrics", "Retention
 * metrics"), which read events in a sequence rather than aggregate them:
 * - a funnel has 2 to 10 steps, each an event key with an optional condition on the event's
 *   properties, and a window (a fixed-length duration, PT1S..P365D) after the exposure;
 * - a retention metric has an optional event key (any event without one) and a window
 *   {from, to} after the exposure, 0 <= from < to <= P365D;
 * - both are a per-unit 0/1: no aggregation but count, no property_path, capping or unit;
 *   unit_dedup_window (which has a default) is ignored: their windows say which events count.
 */
import type { FieldError } from '../../http/problems.js';
import { parseDedupWindow } from './dedup-window.js';
import { propertyPathProblem } from './property-path.js';
import type { FunnelStep, MetricInput, RetentionWindow } from './schemas.js';

export const MIN_FUNNEL_STEPS = 2;
export const MAX_FUNNEL_STEPS = 10;

export type SequenceKind = 'funnel' | 'retention';

export function isSequenceKind(kind: string): kind is SequenceKind {
  return kind === 'funnel' || kind === 'retention';
}

/** What a sequence metric resolves to besides the common fields. */
export interface ResolvedSequence {
  event_key: string;
  window: string;
  window_ms: number;
  steps: FunnelStep[] | null;
  retention: RetentionWindow | null;
}

/** A retention bound: `from` may be zero (the window opens at the exposure), which the dedup window's rule refuses. */
export function parseBound(text: string, zeroAllowed: boolean): { ok: true; ms: number } | { ok: false; message: string } {
  if (zeroAllowed && /^P(?:0+W)?(?:0+D)?(?:T(?:0+H)?(?:0+M)?(?:0+(?:[.,]0+)?S)?)?$/.test(text) && /\d/.test(text)) return { ok: true, ms: 0 };
  return parseDedupWindow(text);
}

function conditionErrors(step: FunnelStep, pointer: string): FieldError[] {
  const where = step.where;
  if (where === undefined || where === null) return [];
  const errors: FieldError[] = [];
  const pathProblem = propertyPathProblem(where.property_path);
  if (pathProblem) errors.push({ pointer: `${pointer}/where/property_path`, message: pathProblem });
  if (where.op !== 'eq' && where.op !== 'neq' && typeof where.value !== 'number') {
    errors.push({ pointer: `${pointer}/where/value`, message: `${where.op} compares numbers: give a number` });
  }
  if (typeof where.value === 'number' && !Number.isFinite(where.value)) errors.push({ pointer: `${pointer}/where/value`, message: 'must be a finite number' });
  return errors;
}

function funnelErrors(input: MetricInput): { errors: FieldError[]; windowMs: number } {
  const errors: FieldError[] = [];
  const steps = input.steps ?? [];
  if (input.steps === undefined)
    errors.push({ pointer: '/steps', message: `a funnel needs its steps: ${MIN_FUNNEL_STEPS} to ${MAX_FUNNEL_STEPS} events in order` });
  else if (steps.length < MIN_FUNNEL_STEPS) errors.push({ pointer: '/steps', message: `a funnel has at least ${MIN_FUNNEL_STEPS} steps; got ${steps.length}` });
  else if (steps.length > MAX_FUNNEL_STEPS) errors.push({ pointer: '/steps', message: `a funnel has at most ${MAX_FUNNEL_STEPS} steps; got ${steps.length}` });
  steps.forEach((step, index) => errors.push(...conditionErrors(step, `/steps/${index}`)));
  if (input.event_key !== undefined) errors.push({ pointer: '/event_key', message: 'a funnel names its events in steps; remove event_key' });
  if (input.retention !== undefined) errors.push({ pointer: '/retention', message: 'only a retention metric has a retention window' });
  let windowMs = 0;
  if (input.window === undefined) errors.push({ pointer: '/window', message: 'a funnel needs a window: the ISO 8601 duration after the exposure, e.g. P7D' });
  else {
    const parsed = parseDedupWindow(input.window);
    if (parsed.ok) windowMs = parsed.ms;
    else errors.push({ pointer: '/window', message: parsed.message });
  }
  return { errors, windowMs };
}

function retentionErrors(input: MetricInput): { errors: FieldError[]; toMs: number } {
  const errors: FieldError[] = [];
  if (input.steps !== undefined) errors.push({ pointer: '/steps', message: 'only a funnel has steps' });
  if (input.window !== undefined) errors.push({ pointer: '/window', message: 'a retention metric’s window is retention: {from, to}' });
  if (input.retention === undefined) {
    errors.push({
      pointer: '/retention',
      message: 'a retention metric needs retention: {from, to}, ISO 8601 durations after the exposure, e.g. {"from": "P7D", "to": "P14D"}',
    });
    return { errors, toMs: 0 };
  }
  const from = parseBound(input.retention.from, true);
  const to = parseBound(input.retention.to, false);
  if (!from.ok) errors.push({ pointer: '/retention/from', message: from.message });
  if (!to.ok) errors.push({ pointer: '/retention/to', message: to.message });
  if (from.ok && to.ok && from.ms >= to.ms) errors.push({ pointer: '/retention/to', message: `must be after from (${input.retention.from})` });
  return { errors, toMs: to.ok ? to.ms : 0 };
}

/** The fields a sequence metric does not take. */
function commonErrors(input: MetricInput): FieldError[] {
  const errors: FieldError[] = [];
  const kind = input.kind;
  if (input.aggregation !== undefined && input.aggregation !== 'count') {
    errors.push({ pointer: '/aggregation', message: `a ${kind} metric is whether each unit converted: aggregation is count` });
  }
  const refused: Array<[keyof MetricInput, string]> = [
    ['property_path', 'reads no number; a step’s where condition names its own property_path'],
    ['capping', 'is a 0/1 per unit: there is nothing to cap'],
    ['unit', 'is a rate, shown in %: a unit is for counts, amounts, durations and ratios'],
    ['numerator_metric_id', 'only a ratio metric has a numerator and a denominator'],
    ['denominator_metric_id', 'only a ratio metric has a numerator and a denominator'],
  ];
  for (const [field, why] of refused) {
    if (input[field] !== undefined && input[field] !== null) errors.push({ pointer: `/${field}`, message: `a ${kind} metric ${why}` });
  }
  return errors;
}

export function resolveSequence(input: MetricInput & { kind: SequenceKind }): { sequence: ResolvedSequence } | { errors: FieldError[] } {
  const errors = commonErrors(input);
  if (input.kind === 'funnel') {
    const funnel = funnelErrors(input);
    errors.push(...funnel.errors);
    if (errors.length > 0) return { errors };
    const steps = (input.steps ?? []).map((step) => (step.where ? { event_key: step.event_key, where: step.where } : { event_key: step.event_key }));
    return { sequence: { event_key: '', window: input.window as string, window_ms: funnel.windowMs, steps, retention: null } };
  }
  const retention = retentionErrors(input);
  errors.push(...retention.errors);
  if (errors.length > 0 || !input.retention) return { errors };
  const window = { from: input.retention.from, to: input.retention.to };
  return { sequence: { event_key: input.event_key ?? '', window: window.to, window_ms: retention.toMs, steps: null, retention: window } };
}

/** The kind a metric's per-unit values are analysed as: a funnel's and a retention metric's are 0/1, as a binary metric's. */
export function perUnitKind<K extends string>(kind: K): Exclude<K, SequenceKind> | 'binary' {
  return isSequenceKind(kind) ? 'binary' : (kind as Exclude<K, SequenceKind>);
}
