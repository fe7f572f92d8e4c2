import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scrape } from '../support/prometheus.js';
import { eventually, freePort, spawnVerdict, stopProcess } from '../support/processes.js';

/** A GET on a connection of its own: the cluster hands each new connection to the next process. */
function getOnNewConnection(url: string): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0 }));
      })
      .on('error', reject);
  });
}

async function serving(url: string): Promise<boolean> {
  return (await fetch(`${url}/v1/healthz`).catch(() => null))?.ok === true;
}

describe('GET /metrics of serve --processes 2', () => {
  let dataDir: string;
  let primary: ChildProcess;
  let url: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-cluster-metrics-'));
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    primary = spawnVerdict(['serve', '--processes', '2', '--port', String(port)], { VERDICT_DATA_DIR: dataDir, VERDICT_LOG_LEVEL: 'warn', HOST: '127.0.0.1' });
    // Both processes answer their first scrape only once both are up.
    await eventually(async () => (await serving(url)) && (await scrape(url)).get('verdict_cluster_processes', { state: 'reporting' }) === 2, 60_000);
  }, 90_000);

  afterAll(async () => {
    if (primary) await stopProcess(primary);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('counts the requests of both processes, whichever of them the scrape reaches', async () => {
    const readiness = { method: 'GET', route: '/v1/readyz', status_code: '200' };
    const before = await scrape(url);
    const answers = await Promise.all(Array.from({ length: 10 }, () => getOnNewConnection(`${url}/v1/readyz`)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(200));
    // Several scrapes, so both processes answer some: each must report the whole cluster.
    for (let i = 0; i < 4; i++) {
      const after = await scrape(url);
      expect(after.count('verdict_http_requests_total', readiness) - before.count('verdict_http_requests_total', readiness)).toBe(10);
      expect(after.count('verdict_http_request_duration_seconds_count', readiness)).toBe(after.count('verdict_http_requests_total', readiness));
      expect(after.get('verdict_cluster_processes', { state: 'reporting' })).toBe(2);
      expect(after.get('verdict_cluster_processes', { state: 'missing' })).toBe(0);
      // Database figures are the same for every process: merged by max, not summed.
      expect(after.get('verdict_buffer_max_pending_events')).toBe(100_000);
      expect(after.get('verdict_metrics_source_up', { source: 'database' })).toBe(1);
      expect(after.names).toContain('process_resident_memory_bytes');
    }
  });
});

describe('GET /metrics of serve with VERDICT_METRICS=0', () => {
  let dataDir: string;
  let server: ChildProcess;
  let url: string;

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-metrics-off-'));
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    server = spawnVerdict(['serve', '--port', String(port)], { VERDICT_DATA_DIR: dataDir, VERDICT_LOG_LEVEL: 'warn', HOST: '127.0.0.1', VERDICT_METRICS: '0' });
    await eventually(() => serving(url), 60_000);
  }, 90_000);

  afterAll(async () => {
    if (server) await stopProcess(server);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers a 404 problem', async () => {
    const response = await fetch(`${url}/metrics`);
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await response.json()) as { status: number; title: string; detail: string };
    expect(problem).toMatchObject({ status: 404, title: 'Not Found' });
    expect(problem.detail).toContain('/metrics');
  });
});
