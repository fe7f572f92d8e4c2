import { describe, expect, it } from 'vitest';
import { writerTaskOf } from '../buffer/writer-thread-protocol.js';
import { nothingToWrite } from '../db/write-tasks.js';
import { insertEvents } from '../features/events/store.js';
import { writerTasks } from './writer-tasks.js';

describe("the writer thread's registry of tasks", () => {
  it('finds every registered function under the name it carries, and nothing else', () => {
    for (const kind of ['persist', 'write'] as const) {
      for (const [name, task] of Object.entries(writerTasks[kind])) expect(task.writerTask).toBe(name);
    }
    expect(Object.keys(writerTasks.write).sort()).toEqual([
      'analysis.build-step',
      'analysis.refresh',
      'assignment.first-writes',
      'holdouts.contacts',
      'writes.nothing',
    ]);
    expect(writerTaskOf(writerTasks, 'persist', 'events.insert')).toBe(insertEvents);
    expect(writerTaskOf(writerTasks, 'write', 'writes.nothing')).toBe(nothingToWrite);
    expect(() => writerTaskOf(writerTasks, 'write', 'toString')).toThrow('no write task named toString');
  });
});
