import fs from 'node:fs';

/** Most bytes handed to one write(2). */
const MAX_WRITE_BYTES = 64 * 1024;
/** While the pipe is full: how soon to try again (a full pipe says nothing about when its reader reads). */
const RETRY_MS = 5;
/** Past this many unwritten bytes new lines are dropped (and counted), so a stalled reader cannot exhaust memory. */
const MAX_QUEUED_BYTES = 64 * 1024 * 1024;
/** How long an exit waits, at most, for a slow log reader to take the last lines. */
export const EXIT_FLUSH_MS = 2_000;

const sleeper = new Int32Array(new SharedArrayBuffer(4));

function isFull(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === 'EAGAIN' || code === 'EWOULDBLOCK' || code === 'EBUSY';
}

/**
 * Writes the service's log to a file descriptor (stdout) and never waits on its reader for long.
 *
 * Why not sonic-boom: stdout is a non-blocking pipe in practice (Node opens it as one as soon
 * as anything touches `process.stdout`, which tsx's colour check does, and the flag is shared by
 * every process on that pipe). sonic-boom's `flushSync`, which ran when the process exited,
 * sleeps 100 ms and tries again on every failed write, EPIPE included: with a pipe that its
 * reader had stopped reading, or had closed, `verdict serve` never finished exiting (issue 39).
 *
 * Here each write(2) is non-blocking from the event loop's thread: what the pipe takes now is
 * written, the rest waits for a retry a few milliseconds later (a timer that keeps nothing
 * alive). A reader that is gone (EPIPE, any error but a full pipe) ends the log: what is queued
 * is dropped. At exit `flushSync` gives a slow reader at most EXIT_FLUSH_MS.
 */
export class LogSink {
  readonly #fd: number;
  /** Unwritten bytes, oldest first; `#offset` of the first are already written. */
  #queue: Buffer[] = [];
  #offset = 0;
  #queuedBytes = 0;
  #retry: NodeJS.Timeout | null = null;
  #broken = false;
  #droppedLines = 0;
  /** Dropped lines already reported in the log. */
  #reportedDrops = 0;

  constructor(fd: number) {
    this.#fd = fd;
  }

  /** Lines dropped because the reader did not keep up (beyond MAX_QUEUED_BYTES) or was gone. */
  get droppedLines(): number {
    return this.#droppedLines;
  }

  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  write(text: string): void {
    if (this.#broken) {
      this.#droppedLines += countLines(text);
      return;
    }
    if (this.#queuedBytes >= MAX_QUEUED_BYTES) {
      this.#droppedLines += countLines(text);
      return;
    }
    const chunk = Buffer.from(text, 'utf8');
    this.#queue.push(chunk);
    this.#queuedBytes += chunk.length;
    if (this.#retry === null) this.#writeWhatFits();
  }

  /** Writes what is queued, waiting at most `timeoutMs` for a full pipe to be read; returns whether all of it went out. */
  flushSync(timeoutMs = EXIT_FLUSH_MS): boolean {
    const deadline = performance.now() + timeoutMs;
    while (this.#writeAvailable() === 'full') {
      if (performance.now() >= deadline) return false;
      Atomics.wait(sleeper, 0, 0, 2);
    }
    return this.#queue.length === 0;
  }

  #writeWhatFits(): void {
    const outcome = this.#writeAvailable();
    if (outcome === 'done' && this.#droppedLines > this.#reportedDrops) this.#reportDrops();
    if (outcome !== 'full') return;
    this.#retry = setTimeout(() => {
      this.#retry = null;
      this.#writeWhatFits();
    }, RETRY_MS).unref();
  }

  /** Writes queued bytes until done, the pipe is full, or the reader is gone. */
  #writeAvailable(): 'done' | 'full' | 'broken' {
    while (this.#queue.length > 0 && !this.#broken) {
      const head = this.#queue[0] as Buffer;
      let written: number;
      try {
        written = fs.writeSync(this.#fd, head, this.#offset, Math.min(head.length - this.#offset, MAX_WRITE_BYTES));
      } catch (error) {
        if (isFull(error)) return 'full';
        this.#break();
        return 'broken';
      }
      this.#offset += written;
      this.#queuedBytes -= written;
      if (this.#offset >= head.length) {
        this.#queue.shift();
        this.#offset = 0;
      }
    }
    return this.#broken ? 'broken' : 'done';
  }

  /** Once the reader has caught up: says in the log itself that lines are missing, and how many. */
  #reportDrops(): void {
    const dropped = this.#droppedLines - this.#reportedDrops;
    this.#reportedDrops = this.#droppedLines;
    const line = {
      level: 40,
      time: new Date().toISOString(),
      service: 'verdict',
      dropped_lines: dropped,
      msg: 'log lines dropped: stdout was not read fast enough',
    };
    this.write(`${JSON.stringify(line)}\n`);
  }

  /** The reader is gone: nothing queued can reach it. */
  #break(): void {
    this.#broken = true;
    for (const chunk of this.#queue) this.#droppedLines += countLines(chunk.toString('utf8'));
    this.#queue = [];
    this.#queuedBytes = 0;
    this.#offset = 0;
  }
}

function countLines(text: string): number {
  let lines = 0;
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) lines += 1;
  return lines;
}
