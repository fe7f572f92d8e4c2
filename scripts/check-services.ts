// CI must fail, not skip, when the PostgreSQL or Redis it was promised is unreachable.
import { Redis } from 'ioredis';
import pg from 'pg';

async function checkPostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  const { rows } = await client.query<{ version: string }>('select version()');
  await client.end();
  console.log(`PostgreSQL reachable: ${rows[0]?.version.split(',')[0]}`);
}

async function checkRedis(url: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 5_000, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  await redis.connect();
  const pong = await redis.ping();
  redis.disconnect();
  console.log(`Redis reachable: ${pong}`);
}

const failures: string[] = [];
const databaseUrl = process.env.VERDICT_TEST_DATABASE_URL;
const redisUrl = process.env.VERDICT_TEST_REDIS_URL;
if (!databaseUrl) failures.push('VERDICT_TEST_DATABASE_URL is not set');
if (!redisUrl) failures.push('VERDICT_TEST_REDIS_URL is not set');
if (databaseUrl) await checkPostgres(databaseUrl).catch((e: unknown) => failures.push(`PostgreSQL at ${databaseUrl}: ${String(e)}`));
if (redisUrl) await checkRedis(redisUrl).catch((e: unknown) => failures.push(`Redis at ${redisUrl}: ${String(e)}`));
if (failures.length > 0) {
  for (const failure of failures) console.error(`unreachable: ${failure}`);
  process.exit(1);
}
