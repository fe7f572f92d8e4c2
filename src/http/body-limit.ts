import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * What the server reads and throws away of a body over the limit before it answers 413 (as
 * nginx's lingering close does). A client such as Node's fetch sends its whole body before it
 * reads an answer; a server that answers at once and closes the connection leaves bytes unread,
 * the kernel resets the connection, and the client sees EPIPE instead of the problem. Past the
 * bound (a declared length above it, more bytes than it, or a client too slow) the answer goes
 * out at once and the connection is closed, as before.
 */
export const DISCARD_LIMIT_BYTES = 64 * 1024 * 1024;
/** The longest the rest of a body may take to arrive, and the longest pause within it. */
export const DISCARD_TIME_MS = 30_000;
export const DISCARD_IDLE_MS = 5_000;

/**
 * Reads the rest of the request's body and drops it; true once the client has sent all of it
 * within the bounds, false when a bound was reached (the body is then left unread).
 */
export function discardRestOfBody(raw: IncomingMessage): Promise<boolean> {
  if (raw.complete) return Promise.resolve(true);
  const declared = Number(raw.headers['content-length']);
  if (declared > DISCARD_LIMIT_BYTES) return Promise.resolve(false);
  return new Promise((resolve) => {
    let discarded = 0;
    let idle: NodeJS.Timeout | undefined;
    const finish = (whole: boolean) => {
      clearTimeout(overall);
      clearTimeout(idle);
      raw.off('data', onData).off('end', onEnd).off('error', onFailure).off('close', onClose);
      resolve(whole);
    };
    const restartIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => finish(false), DISCARD_IDLE_MS);
    };
    const onData = (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > DISCARD_LIMIT_BYTES) finish(false);
      else restartIdle();
    };
    const onEnd = () => finish(true);
    const onFailure = () => finish(false);
    const onClose = () => finish(raw.complete);
    const overall = setTimeout(() => finish(false), DISCARD_TIME_MS);
    raw.on('data', onData).once('end', onEnd).once('error', onFailure).once('close', onClose);
    restartIdle();
    raw.resume();
  });
}

/**
 * Before a 413 is sent: discards the rest of the body; when all of it came, the connection is
 * kept (Fastify asked to close it because the body was left unread), otherwise it still closes.
 */
export async function lingerOverLargeBody(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const whole = await discardRestOfBody(request.raw);
  if (whole) reply.removeHeader('connection');
  else reply.header('connection', 'close');
}
