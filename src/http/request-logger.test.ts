import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { isoTimeOfThisMillisecond, loggerOptions, loggerWritingTo } from '../logger.js';
import { RequestLogger } from './request-logger.js';

function serviceLogger(level = 'info') {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(loggerOptions(level), { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { logger, lines };
}

/** The fields of a line other than its time, which differs between two lines. */
function withoutTime(line: Record<string, unknown> | undefined) {
  const { time: _time, ...rest } = line ?? {};
  return rest;
}

describe('RequestLogger', () => {
  it('writes the access line exactly as the pino child with the request id would, without making the child', () => {
    const { logger, lines } = serviceLogger();
    const child = vi.spyOn(logger, 'child');
    const line = { method: 'POST', route: '/v1/assign', url: '/v1/assign', status: 200, duration_ms: 0.42 };

    new RequestLogger(logger, { request_id: 'req-1' }, {}).logWithBindings('info', line, 'request');
    expect(child).not.toHaveBeenCalled();
    child.mockRestore();
    logger.child({ request_id: 'req-1' }).info(line, 'request');

    expect(lines).toHaveLength(2);
    expect(Object.keys(lines[0] ?? {})).toEqual(Object.keys(lines[1] ?? {}));
    expect(withoutTime(lines[0])).toEqual(withoutTime(lines[1]));
    expect(lines[0]).toMatchObject({ request_id: 'req-1', service: 'verdict', status: 200, msg: 'request' });
  });

  it("writes the access line of the service's own logger (its plain info line writer) as the pino child would", () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = loggerWritingTo('info', { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const line = { method: 'GET', route: null, url: '/v1/nowhere?x="y"', status: 404, duration_ms: 1.5 };

    new RequestLogger(logger, { request_id: 'req-3' }, {}).logWithBindings('info', line, 'request');
    logger.child({ request_id: 'req-3' }).info(line, 'request');

    expect(lines).toHaveLength(2);
    expect(Object.keys(lines[0] ?? {})).toEqual(Object.keys(lines[1] ?? {}));
    expect(withoutTime(lines[0])).toEqual(withoutTime(lines[1]));
  });

  it('makes the child on the first line logged through it, once, and logs the request id with every line', () => {
    const { logger, lines } = serviceLogger();
    const child = vi.spyOn(logger, 'child');
    const requestLogger = new RequestLogger(logger, { request_id: 'req-2' }, {});

    requestLogger.error({ err: new Error('boom') }, 'unhandled error');
    requestLogger.warn('second');
    requestLogger.logWithBindings('error', { status: 500 }, 'request errored');

    expect(child).toHaveBeenCalledTimes(1);
    expect(lines.map((line) => [line.request_id, line.msg])).toEqual([
      ['req-2', 'unhandled error'],
      ['req-2', 'second'],
      ['req-2', 'request errored'],
    ]);
    expect(lines.filter((line) => Object.keys(line).filter((key) => key === 'request_id').length !== 1)).toEqual([]);
  });

  it('honours the service level and a route level without making the child for lines it drops', () => {
    const quiet = serviceLogger('warn');
    const child = vi.spyOn(quiet.logger, 'child');
    const inherited = new RequestLogger(quiet.logger, { request_id: 'a' }, {});
    inherited.info('dropped');
    inherited.logWithBindings('info', { status: 200 }, 'request');
    expect(inherited.isLevelEnabled('info')).toBe(false);
    expect(inherited.isLevelEnabled('warn')).toBe(true);
    expect(inherited.level).toBe('warn');
    expect(child).not.toHaveBeenCalled();
    expect(quiet.lines).toEqual([]);

    const chatty = serviceLogger('info');
    const routeLevel = new RequestLogger(chatty.logger, { request_id: 'b' }, { level: 'error' });
    expect(routeLevel.isLevelEnabled('warn')).toBe(false);
    expect(routeLevel.isLevelEnabled('error')).toBe(true);
    expect(routeLevel.isLevelEnabled('silent')).toBe(false);
    routeLevel.warn('dropped');
    routeLevel.error('kept');
    expect(chatty.lines.map((line) => line.msg)).toEqual(['kept']);
  });
});

describe('isoTimeOfThisMillisecond', () => {
  it("is pino's isoTime field, for the current millisecond", () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-24T10:00:00.123Z') });
    try {
      expect(isoTimeOfThisMillisecond()).toBe(',"time":"2026-11-24T10:00:00.123Z"');
      vi.setSystemTime(Date.parse('2026-11-24T10:00:00.124Z'));
      expect(isoTimeOfThisMillisecond()).toBe(pino.stdTimeFunctions.isoTime());
      expect(isoTimeOfThisMillisecond()).toBe(',"time":"2026-11-24T10:00:00.124Z"');
    } finally {
      vi.useRealTimers();
    }
  });
});
