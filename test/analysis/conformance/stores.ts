import { afterAll, beforeAll } from 'vitest';
import { ManualClock } from '../../support/clock.js';
import { clickhouseUnavailable, TEST_CLICKHOUSE } from '../../support/clickhouse.js';
import { testDialects } from '../../support/databases.js';
import { startTestServer, type TestServer } from '../../support/server.js';

/** One analysis store the conformance suite runs on: its name as snapshots report it (`computation.store`). */
export interface StoreUnderTest {
  name: 'sqlite' | 'postgres' | 'clickhouse';
  start(clock: ManualClock): Promise<TestServer>;
}

const ALL: StoreUnderTest[] = [
  { name: 'sqlite', start: (clock) => startTestServer('sqlite', { clock }) },
  { name: 'postgres', start: (clock) => startTestServer('postgres', { clock }) },
  // ClickHouse stores events and analyses them beside SQLite's catalogue (the embedded engine).
  { name: 'clickhouse', start: (clock) => startTestServer('sqlite', { clock, config: { clickhouse: TEST_CLICKHOUSE } }) },
];

const warned = new Set<string>();

/**
 * The stores this run can reach: SQLite always; PostgreSQL with VERDICT_TEST_DATABASE_URL;
 * ClickHouse where the embedded engine is installed (always in CI). A store left out is named in
 * a warning, never silently.
 */
export function reachableStores(): StoreUnderTest[] {
  return ALL.filter((store) => {
    const reason =
      store.name === 'postgres' && !testDialects().includes('postgres')
        ? 'VERDICT_TEST_DATABASE_URL is not set'
        : store.name === 'clickhouse'
          ? clickhouseUnavailable()
          : null;
    if (reason && !warned.has(store.name)) {
      warned.add(store.name);
      console.warn(`[verdict] ${reason}: the conformance suite leaves out the ${store.name} store.`);
    }
    return reason === null;
  });
}

/** Starting every store's server: the embedded ClickHouse engine's start took over a minute on a loaded machine. */
const START_TIMEOUT_MS = 180_000;

/** One server per reachable store for the whole file (started in beforeAll, closed in afterAll), all on one clock. */
export function serversPerStore(clock: ManualClock): () => Map<StoreUnderTest['name'], TestServer> {
  const servers = new Map<StoreUnderTest['name'], TestServer>();
  beforeAll(async () => {
    for (const store of reachableStores()) servers.set(store.name, await store.start(clock));
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    for (const server of servers.values()) await server.close();
  });
  return () => servers;
}
