import pino, { type Logger, type LoggerOptions } from 'pino';

/** Paths that may carry credentials; pino replaces them before a line is written. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-signature"]',
  'req.headers["x-service-signature"]',
  'headers.authorization',
  'key',
  'secret',
  'webhook_secret',
  'inbound_secret',
];

/** Query parameters whose values are credentials when someone puts one in a URL. */
const SECRET_QUERY_PARAMETERS = new Set(['api_key', 'key', 'token', 'secret']);
const CENSOR = '[redacted]';

function decodedName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' ')).toLowerCase();
  } catch {
    return name.toLowerCase();
  }
}

/** The URL with the values of credential-like query parameters (any case, even percent-encoded) censored. */
export function redactUrl(url: string): string {
  const question = url.indexOf('?');
  if (question === -1) return url;
  const pairs = url
    .slice(question + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals === -1 ? pair : pair.slice(0, equals);
      return equals !== -1 && SECRET_QUERY_PARAMETERS.has(decodedName(name)) ? `${name}=${CENSOR}` : pair;
    });
  return `${url.slice(0, question)}?${pairs.join('&')}`;
}

/** What Fastify logs of a request (its own serializer's fields), with the URL redacted. */
interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

function serializeRequest(request: LoggedRequest) {
  return {
    method: request.method,
    url: typeof request.url === 'string' ? redactUrl(request.url) : request.url,
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    base: { service: 'verdict' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: CENSOR },
    serializers: { req: serializeRequest },
  };
}

/**
 * The service's logger. Lines go to stdout asynchronously (sonic-boom collects the lines logged
 * while a write is under way into the next one), so a request never waits on the pipe; pino
 * flushes what is pending synchronously when the process exits, also after an uncaught
 * exception. Only a SIGKILL can lose the last lines.
 */
export function createLogger(level: string): Logger {
  return pino(loggerOptions(level), pino.destination({ dest: 1, sync: false }));
}

/** For one-shot commands whose stdout is their result (JSON to pipe on): logs go to stderr. */
export function createCommandLogger(level: string): Logger {
  return pino(loggerOptions(level), pino.destination(2));
}

export type { Logger };
