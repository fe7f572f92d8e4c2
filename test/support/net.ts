import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { waitFor } from './wait-for.js';

/**
 * A TCP port on the loopback that was free a moment ago, for a child process the test starts.
 * It is drawn at random from below the kernel's ephemeral range: a port from that range (what
 * `listen(0)` hands out) can be taken between this probe and the child's bind by any outgoing
 * connection or any other test's `listen(0)` server, and then the child fails with EADDRINUSE
 * or, worse, another test's receiver answers this one's requests.
 */
export async function freePort(): Promise<number> {
  const [low, high] = FIXED_PORTS;
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = low + crypto.randomInt(high - low);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port between ${low} and ${high} after 100 tries`);
}

/** [first, end) of the ports freePort draws from: up to 12,000 ports just below the ephemeral range. */
const FIXED_PORTS = ((): [number, number] => {
  let ephemeralLow = 32_768; // Linux's default; macOS's range starts higher still
  try {
    ephemeralLow = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || ephemeralLow;
  } catch {
    // not Linux: keep the default
  }
  const end = Math.max(ephemeralLow, 12_024);
  return [Math.max(1_024, end - 12_000), end];
})();

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** Whether something accepts TCP connections on the loopback port right now. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Waits until every port accepts connections: a child's pid file or first log line can come
 * before its listening sockets do (or instead of them, when a bind failed), and a request sent
 * then is refused.
 */
export async function waitForPorts(ports: readonly number[], timeoutMs: number, explain: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const port of ports) {
    await waitFor(() => accepts(port), Math.max(0, deadline - Date.now()), `127.0.0.1:${port} to accept connections`).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}. ${explain()}`);
    });
  }
}
