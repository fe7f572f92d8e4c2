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

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    base: { service: 'verdict' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
}

export function createLogger(level: string): Logger {
  return pino(loggerOptions(level));
}

/** For one-shot commands whose stdout is their result (JSON to pipe on): logs go to stderr. */
export function createCommandLogger(level: string): Logger {
  return pino(loggerOptions(level), pino.destination(2));
}

export type { Logger };
