import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { LogSink } from './log-sink.js';
import { BatchedDestination, HANDOVER_DELAY_MS, infoLineWriterOf, loggerWritingTo } from './logger.js';

describe('the plain info line writer', () => {
  it('writes the bytes pino writes for the same fields, whatever the strings hold', () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-24T10:00:00.123Z') });
    try {
      const lines: string[] = [];
      const logger = loggerWritingTo('info', { write: (line: string) => lines.push(line) });
      const writeInfo = infoLineWriterOf(logger);
      const awkward = [
        { request_id: 'req-1', method: 'POST', route: '/v1/assign', url: '/v1/assign', status: 200, duration_ms: 0.421 },
        { request_id: 'r', method: 'GET', route: null, url: '/v1/"quoted"\\back?x=é&y=😀&z=\u0001\ud800', status: 404, duration_ms: 12 },
        { request_id: 'r', method: 'GET', route: '/v1/x', url: '/v1/x', status: 500, duration_ms: 1e-7, extra: undefined },
        {},
      ];
      for (const fields of awkward) {
        writeInfo?.({ ...fields, msg: 'request' });
        logger.info(fields, 'request');
      }
      // No fields at all, as pino writes a line without a message.
      writeInfo?.({});
      logger.info({});
      expect(writeInfo).toBeTypeOf('function');
      expect(lines).toHaveLength(10);
      for (let index = 0; index < lines.length; index += 2) expect(lines[index]).toBe(lines[index + 1]);
      expect(JSON.parse(lines[0] ?? '')).toMatchObject({
        level: 30,
        time: '2026-11-24T10:00:00.123Z',
        service: 'verdict',
        request_id: 'req-1',
        msg: 'request',
      });
    } finally {
      vi.useRealTimers();
    }
  });

  it('is there for loggers made by loggerWritingTo and their children that add no bindings, as Fastify makes', () => {
    const logger = loggerWritingTo('info', { write: () => undefined });
    expect(infoLineWriterOf(logger.child({}, { serializers: { req: (request: unknown) => request } }))).toBe(infoLineWriterOf(logger));
    expect(infoLineWriterOf(logger.child({ component: 'drainer' }))).toBeUndefined();
    expect(infoLineWriterOf(pino({ level: 'info' }, { write: () => undefined }))).toBeUndefined();
  });
});

describe('BatchedDestination', () => {
  /** A BatchedDestination writing to a fresh file through a LogSink, with the byte length of each string it hands the sink. */
  function openDestination() {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdict-log-'));
    const file = path.join(dir, 'out.log');
    const fd = fs.openSync(file, 'a');
    const sink = new LogSink(fd);
    const writes: number[] = [];
    const write = sink.write.bind(sink);
    sink.write = (text: string) => {
      writes.push(Buffer.byteLength(text));
      write(text);
    };
    const written = () => fs.readFileSync(file, 'utf8');
    const remove = () => {
      fs.closeSync(fd);
      fs.rmSync(dir, { recursive: true, force: true });
    };
    return { destination: new BatchedDestination(sink), writes, written, remove };
  }

  it('hands the lines of 20 ms to the sink together, in order, in one write', async () => {
    const { destination, writes, written, remove } = openDestination();
    const lines = Array.from({ length: 300 }, (_, n) => `{"n":${n},"text":"${'é'.repeat(40)}"}\n`);
    const started = performance.now();
    for (const line of lines) destination.write(line);
    // Several turns of the event loop later, the lines still wait for the rest of the 20 ms.
    for (let turn = 0; turn < 3; turn += 1) await new Promise((resolve) => setImmediate(resolve));
    if (performance.now() - started < HANDOVER_DELAY_MS) expect(writes).toEqual([]);
    await vi.waitFor(() => expect(writes.length).toBeGreaterThan(0), { timeout: 5_000, interval: 5 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(HANDOVER_DELAY_MS - 1);
    expect(writes).toEqual([Buffer.byteLength(lines.join(''))]);
    expect(written()).toBe(lines.join(''));
    remove();
  });

  it('hands the lines over at once when 64 K characters are pending, before the 20 ms are up', () => {
    const { destination, writes, written, remove } = openDestination();
    const lines = Array.from({ length: 700 }, (_, n) => `{"n":${n},"text":"${'x'.repeat(90)}"}\n`);
    for (const line of lines) destination.write(line);
    // Written synchronously: a file takes every byte at once.
    expect(writes.length).toBeGreaterThan(0);
    expect(written().length).toBeGreaterThanOrEqual(64 * 1024);
    expect(lines.join('').startsWith(written())).toBe(true);
    destination.flushSync();
    expect(written()).toBe(lines.join(''));
    remove();
  });

  it('writes what is still pending when flushed synchronously, before its turn comes', () => {
    const { destination, written, remove } = openDestination();
    destination.write('{"a":1}\n');
    destination.write('{"b":2}\n');
    expect(written()).toBe('');
    destination.flushSync();
    expect(written()).toBe('{"a":1}\n{"b":2}\n');
    remove();
  });
});
