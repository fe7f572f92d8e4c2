/**
 * bench:analysis --clickhouse's incremental figures (docs/analysis.md "Incremental analysis in
 * ClickHouse"): on the seeded experiment, the first incremental computation (it builds every
 * unit's rollups), then twice +1% events drained under the next drain number (60% new events of
 * existing units, 20% late ones, 20% new units exposed with their events) and a refresh after each;
 * the second refresh is timed against the full computation of the same data, in one process so the two compare like with
 * like. The increment is generated inside the engine, as the seed is (clickhouse-facts.ts).
 */
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import type { AppContext } from '../../src/context.js';
import { computeById } from '../../src/features/analysis/service.js';
import type { ComputationMode } from '../../src/features/analysis/store/contract.js';
import { DAY, EVENTS_PER_UNIT } from './analysis-seed.js';

export interface RefreshFigures {
  build_seconds: number;
  /** The refresh after the first +1%, which compares every unit the build's mirror wrote. */
  first_refresh_seconds: number;
  added_events: number;
  refresh_seconds: number;
  refresh_events_read: number;
  refresh_units_refreshed: number;
  /** CPU seconds of the process (the embedded engine runs in it), which a loaded machine inflates less than wall time. */
  refresh_cpu_seconds: number;
  full_cpu_seconds: number;
  full_seconds: number;
  full_events_read: number;
  /** The refresh over the full computation (wall). */
  ratio: number;
  /** The same in CPU seconds. */
  cpu_ratio: number;
  max_rss_mb: number;
}

const padded = (prefix: string, n: string) => `concat('${prefix}', leftPad(toString(${n}), 10, '0'))`;

/** Takes the next drain number, as a drain does, and commits it. */
async function nextDrain(ctx: AppContext): Promise<number> {
  const result = await sql<{ seq: unknown }>`UPDATE clickhouse_drain_sequence SET seq = seq + 1 WHERE id = 1 RETURNING seq`.execute(ctx.db);
  return Number(result.rows[0]?.seq);
}

/** +1% events under one new drain number, and the new units' exposures in ClickHouse's copy; returns the events added. */
async function addIncrement(ctx: AppContext, scope: { workspaceId: string; experimentId: string; t0: number }, units: number, round: number): Promise<number> {
  const ch = ctx.clickhouse;
  if (!ch) throw new Error('no ClickHouse in the context');
  const added = Math.round(units * EVENTS_PER_UNIT * 0.01);
  const fresh = Math.round(added * 0.6);
  const late = Math.round(added * 0.2);
  const newUnits = Math.max(1, Math.round((added - fresh - late) / EVENTS_PER_UNIT));
  const seq = await nextDrain(ctx);
  // Each round's new units follow the previous round's; its ids carry the round.
  const firstNew = units + round * newUnits;
  const params = { workspace: scope.workspaceId, experiment: scope.experimentId, seq };
  const exposedAt = (i: string) => `toInt64(${scope.t0}) + toInt64(${i} % 86400) * 1000`;
  await ch.client.command({
    query: `INSERT INTO exposures (id, workspace_id, experiment_id, unit_id, variant_key, exposed_at, superseded_at, source_key_id, dimension_values, version)
      SELECT ${padded(`xn${round}`, 'number')}, {workspace:String}, {experiment:String}, ${padded('u', `number + ${firstNew}`)},
        if((number + ${firstNew}) % 2 = 0, 'control', 'treatment'), ${exposedAt(`(number + ${firstNew})`)}, NULL, NULL, NULL, ${scope.t0 + 20 * DAY + round * 3_600_000}
      FROM numbers(${newUnits})`,
    query_params: params,
  });
  // Existing units i (every 3rd of the first ones), a day after exposure; late ones 2 minutes after; new units' five events.
  const event = (id: string, unit: string, key: string, properties: string, occurred: string, lateFlag: string) =>
    `SELECT ${id}, {workspace:String}, ${unit}, ${key}, ${properties}, ${occurred}, ${occurred} + if(${lateFlag}, ${8 * DAY}, 1000), toUInt8(${lateFlag}), {seq:UInt64}`;
  const purchase = `concat('{"order":{"total":', toString(10 + number % 90), '.5}}')`;
  const load = `concat('{"timing":{"load_ms":', toString(100 + number % 200), '}}')`;
  const parts = [
    `${event(padded(`ef${round}`, 'number'), padded('u', `(number * 3 + ${round}) % ${units}`), `if(number % 2 = 0, 'purchase', 'page_load')`, `if(number % 2 = 0, ${purchase}, ${load})`, `${exposedAt(`((number * 3 + ${round}) % ${units})`)} + ${DAY}`, '0')} FROM numbers(${fresh})`,
    `${event(padded(`el${round}`, 'number'), padded('u', `(number * 7 + 1 + ${round}) % ${units}`), "'purchase'", purchase, `${exposedAt(`((number * 7 + 1 + ${round}) % ${units})`)} + 120000`, '1')} FROM numbers(${late})`,
    `${event(padded(`en${round}`, 'number'), padded('u', `intDiv(number, ${EVENTS_PER_UNIT}) + ${firstNew}`), `if(number % ${EVENTS_PER_UNIT} < 3, 'page_load', 'purchase')`, `if(number % ${EVENTS_PER_UNIT} < 3, ${load}, ${purchase})`, `${exposedAt(`(intDiv(number, ${EVENTS_PER_UNIT}) + ${firstNew})`)} + 60000 * (number % ${EVENTS_PER_UNIT} + 1)`, '0')} FROM numbers(${newUnits * EVENTS_PER_UNIT})`,
  ];
  for (const part of parts)
    await ch.client.command({
      query: `INSERT INTO events (id, workspace_id, unit_id, event_key, properties, occurred_at, received_at, late, drain_seq) ${part}`,
      query_params: params,
    });
  return fresh + late + newUnits * EVENTS_PER_UNIT;
}

async function timed(ctx: AppContext, experimentId: string, mode: ComputationMode) {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const snapshot = await computeById(ctx, experimentId, { trigger: 'cli', mode });
  const computation = snapshot?.computation;
  const used = process.cpuUsage(cpu);
  return {
    seconds: (performance.now() - started) / 1000,
    cpu_seconds: (used.user + used.system) / 1e6,
    events_read: computation?.events_read ?? 0,
    units_refreshed: computation?.units_refreshed ?? 0,
  };
}

/** The first incremental computation, +1% events, then the refresh and the full computation of the same data. */
export async function refreshFigures(
  ctx: AppContext,
  scope: { workspaceId: string; experimentId: string; t0: number },
  units: number,
): Promise<RefreshFigures> {
  if (process.env.VERDICT_BENCH_TRACE === '1') traceStatements(ctx);
  try {
    const build = await timed(ctx, scope.experimentId, 'incremental');
    // The first refresh after a build compares every unit mirrored within its margin of the build's
    // mirror (rollup-sql.ts RefreshScope.mirrorSeen): a round of +1% first, then the one measured.
    await addIncrement(ctx, scope, units, 0);
    const first = await timed(ctx, scope.experimentId, 'incremental');
    const added = await addIncrement(ctx, scope, units, 1);
    const refresh = await timed(ctx, scope.experimentId, 'incremental');
    const full = await timed(ctx, scope.experimentId, 'full');
    return {
      build_seconds: build.seconds,
      first_refresh_seconds: first.seconds,
      added_events: added,
      refresh_seconds: refresh.seconds,
      refresh_events_read: refresh.events_read,
      refresh_units_refreshed: refresh.units_refreshed,
      refresh_cpu_seconds: refresh.cpu_seconds,
      full_cpu_seconds: full.cpu_seconds,
      full_seconds: full.seconds,
      full_events_read: full.events_read,
      ratio: refresh.seconds / full.seconds,
      cpu_ratio: refresh.cpu_seconds / full.cpu_seconds,
      max_rss_mb: process.resourceUsage().maxRSS / 1024,
    };
  } finally {
    await ctx.close();
  }
}

/**
 * VERDICT_BENCH_TRACE=1: each statement's wall time, the process's CPU seconds meanwhile (the
 * embedded engine's threads included; statements run one at a time) and its head on stderr (where
 * a refresh spends its time).
 */
function traceStatements(ctx: AppContext): void {
  const client = ctx.clickhouse?.client as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const name of ['query', 'command', 'insert']) {
    const original = client[name]?.bind(client);
    if (!original) continue;
    client[name] = async (...args: unknown[]) => {
      const started = performance.now();
      const cpu = process.cpuUsage();
      try {
        return await original(...args);
      } finally {
        const used = process.cpuUsage(cpu);
        const head = String((args[0] as { query?: string; table?: string }).query ?? (args[0] as { table?: string }).table).replace(/\s+/g, ' ');
        const seconds = ((performance.now() - started) / 1000).toFixed(2);
        process.stderr.write(`${seconds} s (cpu ${((used.user + used.system) / 1e6).toFixed(2)})  ${name} ${head.slice(0, 140)}\n`);
      }
    };
  }
}
