import { sql } from 'kysely';
import type { HealthDeps } from './deps.js';

export interface Readiness {
  ready: boolean;
  checks: { database: CheckResult; buffer: CheckResult };
}

interface CheckResult {
  status: 'ok' | 'unavailable';
  latency_ms: number;
  detail?: string;
}

const CHECK_TIMEOUT_MS = 2_000;

async function timed(check: () => Promise<unknown>): Promise<CheckResult> {
  const started = performance.now();
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS).unref()),
    ]);
    return { status: 'ok', latency_ms: Math.round(performance.now() - started) };
  } catch (error) {
    return { status: 'unavailable', latency_ms: Math.round(performance.now() - started), detail: error instanceof Error ? error.message : String(error) };
  }
}

/** Whether this process can do its work now: the database answers and the event buffer is reachable. */
export async function checkReadiness(ctx: HealthDeps): Promise<Readiness> {
  const [database, buffer] = await Promise.all([timed(() => sql`select 1`.execute(ctx.db)), timed(() => ctx.buffer.status())]);
  return { ready: database.status === 'ok' && buffer.status === 'ok', checks: { database, buffer } };
}
