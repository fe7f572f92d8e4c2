import pg from 'pg';

export interface ScratchPostgres {
  url: string;
  drop(): Promise<void>;
}

/**
 * A database of its own on the server of `baseUrl`, so a benchmark never writes into the
 * database it was pointed at; dropped (connections and all) by drop().
 */
export async function scratchPostgres(baseUrl: string, label: string): Promise<ScratchPostgres> {
  const name = `verdict_${label}_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const cleanup = new pg.Client({ connectionString: baseUrl });
      await cleanup.connect();
      try {
        await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await cleanup.end();
      }
    },
  };
}
