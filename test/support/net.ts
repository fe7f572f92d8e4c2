import net from 'node:net';
import { waitFor } from './wait-for.js';

/** A TCP port on the loopback that was free a moment ago (for child processes the test starts). */
export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
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
