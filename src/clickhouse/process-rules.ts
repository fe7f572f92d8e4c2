/**
 * The embedded engine (chdb:PATH) lives inside one process and its directory can be opened by that
 * process only: the process that drains events into it also serves the API and runs the analysis.
 * The configurations that would need a second process say so at start-up instead of failing later.
 */
import type { Config } from '../config.js';

export class ClickHouseProcessError extends Error {}

const SERVER_HINT = 'point VERDICT_CLICKHOUSE_URL at a ClickHouse server (http://user:password@host:8123/database) to run several processes';

/** `serve`: one process that also runs the background work. */
export function checkServeWithClickHouse(config: Config, workers: boolean): void {
  if (config.clickhouse?.kind !== 'embedded') return;
  if (config.apiProcesses > 1) {
    throw new ClickHouseProcessError(
      `the embedded ClickHouse engine (VERDICT_CLICKHOUSE_URL=chdb:...) is owned by one process, so serve cannot run ${config.apiProcesses} processes: use --processes 1 (VERDICT_API_PROCESSES=1), or ${SERVER_HINT}`,
    );
  }
  if (!workers) {
    throw new ClickHouseProcessError(
      `with the embedded ClickHouse engine (VERDICT_CLICKHOUSE_URL=chdb:...) the serving process drains and analyses events itself, so serve cannot run with --no-workers; or ${SERVER_HINT}`,
    );
  }
}

/** `worker`: a second process cannot open the engine the server holds. */
export function checkWorkerWithClickHouse(config: Config): void {
  if (config.clickhouse?.kind !== 'embedded') return;
  throw new ClickHouseProcessError(
    `verdict worker cannot run with the embedded ClickHouse engine (VERDICT_CLICKHOUSE_URL=chdb:...): the engine is owned by the serving process, which runs the background jobs itself; ${SERVER_HINT}`,
  );
}
