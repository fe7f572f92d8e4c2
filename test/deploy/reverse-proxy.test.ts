import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, waitForPorts } from '../support/net.js';
import { startTestServer, type TestServer } from '../support/server.js';

// The TLS configurations docs/deployment.md gives (deploy/nginx.conf, deploy/Caddyfile) and the
// systemd unit (deploy/verdict.service): nginx runs in front of a real Verdict with a self-signed
// certificate and answers over HTTPS; Caddy and systemd check their files. Each part is skipped,
// with a message, where its tool is not installed (Debian: apt-get install nginx caddy).

const ROOT = path.resolve(import.meta.dirname, '../..');
const has = (tool: string) => spawnSync('bash', ['-c', `command -v ${tool}`]).status === 0;

function get(url: string, options: https.RequestOptions = {}, key?: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const client = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.get(url, { ...options, headers: key ? { authorization: `Bearer ${key}` } : {} }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    request.on('error', reject);
  });
}

describe.skipIf(!has('nginx'))('deploy/nginx.conf: TLS in front of Verdict', () => {
  let dir: string;
  let server: TestServer;
  let nginx: ChildProcess;
  let key: string;
  let cert: Buffer;
  let httpsPort: number;
  let httpPort: number;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-nginx-'));
    fs.chmodSync(dir, 0o755); // nginx's workers (nobody) read and write their temp files here
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=verdict.example.com',
        '-addext',
        'subjectAltName=DNS:verdict.example.com',
        '-keyout',
        path.join(dir, 'privkey.pem'),
        '-out',
        path.join(dir, 'fullchain.pem'),
      ],
      { stdio: 'ignore' },
    );
    cert = fs.readFileSync(path.join(dir, 'fullchain.pem'));
    server = await startTestServer('sqlite');
    key = (await server.bootstrap('Proxied')).key;
    httpsPort = await freePort();
    do httpPort = await freePort();
    while (httpPort === httpsPort);
    // The repository's server blocks as written, with this test's ports and certificate paths.
    const blocks = fs
      .readFileSync(path.join(ROOT, 'deploy', 'nginx.conf'), 'utf8')
      .replace('server 127.0.0.1:8080;', `server ${new URL(server.url).host};`)
      .replace('listen 80;', `listen 127.0.0.1:${httpPort};`)
      .replace('listen 443 ssl http2;', `listen 127.0.0.1:${httpsPort} ssl http2;`)
      .replaceAll('/etc/letsencrypt/live/verdict.example.com', dir);
    fs.writeFileSync(path.join(dir, 'verdict.conf'), blocks);
    fs.writeFileSync(
      path.join(dir, 'nginx.conf'),
      `pid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\nevents {}\nhttp {\n  access_log off;\n` +
        ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${dir}/${t};\n`).join('') +
        `  include ${dir}/verdict.conf;\n}\n`,
    );
    const checked = spawnSync('nginx', ['-t', '-p', dir, '-c', path.join(dir, 'nginx.conf')], { encoding: 'utf8' });
    if (checked.status !== 0) throw new Error(`nginx -t refused deploy/nginx.conf:\n${checked.stderr}`);
    nginx = spawn('nginx', ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: 'ignore' });
    const errors = () => `nginx's error log: ${fs.existsSync(path.join(dir, 'error.log')) ? fs.readFileSync(path.join(dir, 'error.log'), 'utf8') : '(none)'}`;
    await waitForPorts([httpsPort, httpPort], 15_000, errors);
  }, 60_000);

  afterAll(async () => {
    if (nginx && nginx.exitCode === null) {
      const exited = new Promise((resolve) => nginx.once('exit', resolve));
      nginx.kill('SIGQUIT');
      await exited;
    }
    await server?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers the API over HTTPS with the key, as Verdict does behind it', async () => {
    const answer = await get(`https://127.0.0.1:${httpsPort}/v1/workspaces/current`, { ca: cert, servername: 'verdict.example.com' }, key);
    expect(answer.status, answer.body).toBe(200);
    expect(JSON.parse(answer.body).name).toBe('Proxied');
    const refused = await get(`https://127.0.0.1:${httpsPort}/v1/workspaces/current`, { ca: cert, servername: 'verdict.example.com' });
    expect(refused.status).toBe(401);
  });

  it('sends plain HTTP to HTTPS', async () => {
    const answer = await get(`http://127.0.0.1:${httpPort}/v1/healthz`);
    expect(answer.status).toBe(301);
    expect(answer.headers.location).toMatch(/^https:\/\/127\.0\.0\.1(:\d+)?\/v1\/healthz$/);
  });
});

describe.skipIf(!has('caddy'))('deploy/Caddyfile', () => {
  it('is a valid Caddy configuration', () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-caddy-'));
    try {
      const checked = spawnSync('caddy', ['validate', '--config', path.join(ROOT, 'deploy', 'Caddyfile'), '--adapter', 'caddyfile'], {
        encoding: 'utf8',
        env: { ...process.env, HOME: home, XDG_DATA_HOME: home, XDG_CONFIG_HOME: home },
      });
      expect(checked.status, checked.stderr).toBe(0);
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!has('systemd-analyze'))('deploy/verdict.service', () => {
  it('passes systemd-analyze verify', () => {
    const checked = spawnSync('systemd-analyze', ['verify', path.join(ROOT, 'deploy', 'verdict.service')], { encoding: 'utf8' });
    expect(checked.status, checked.stderr).toBe(0);
    expect(checked.stderr.trim()).toBe('');
  });
});

for (const tool of ['nginx', 'caddy', 'systemd-analyze']) {
  if (!has(tool))
    console.warn(
      `[verdict] ${tool} is not installed: its deploy/ check is skipped (Debian: apt-get install ${tool === 'systemd-analyze' ? 'systemd' : tool}).`,
    );
}
