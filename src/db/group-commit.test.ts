import { describe, expect, it } from 'vitest';
import { GroupCommit } from './group-commit.js';

describe('GroupCommit', () => {
  it('carries everything submitted in the same tick in one commit, and settles only after it', async () => {
    const commits: number[][] = [];
    let release: () => void = () => undefined;
    const group = new GroupCommit<number, string>({
      commit: async (items) => {
        commits.push(items);
        if (commits.length === 1) await new Promise<void>((resolve) => (release = resolve));
        return items.map((item) => `done ${item}`);
      },
      weigh: () => 1,
      maxWeight: 100,
    });
    const settled: string[] = [];
    const first = [1, 2, 3].map((n) => group.submit(n).then((result) => settled.push(result)));
    await new Promise((resolve) => setImmediate(resolve));
    // While the first commit is in flight, later submissions wait and then go together.
    const second = [4, 5].map((n) => group.submit(n).then((result) => settled.push(result)));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(commits).toEqual([[1, 2, 3]]);
    expect(settled).toEqual([]);
    release();
    await Promise.all([...first, ...second]);
    expect(commits).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    expect(settled).toEqual(['done 1', 'done 2', 'done 3', 'done 4', 'done 5']);
  });

  it('bounds a group by weight, but never splits or refuses a heavy item', async () => {
    const commits: number[][] = [];
    const group = new GroupCommit<number, number>({
      commit: async (items) => {
        commits.push(items);
        return items;
      },
      weigh: (item) => item,
      maxWeight: 10,
    });
    await Promise.all([4, 4, 4, 25, 1].map((n) => group.submit(n)));
    expect(commits).toEqual([[4, 4], [4], [25], [1]]);
  });

  it('fails every submitter of a failed commit and carries on with the next group', async () => {
    let calls = 0;
    const group = new GroupCommit<string, string>({
      commit: async (items) => {
        calls += 1;
        if (calls === 1) throw new Error('disk full');
        return items;
      },
      weigh: () => 1,
      maxWeight: 10,
    });
    const failed = await Promise.allSettled([group.submit('a'), group.submit('b')]);
    expect(failed.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    await expect(group.submit('c')).resolves.toBe('c');
    await group.idle();
  });

  it('hands over up to maxInFlight groups before the first commits, and holds the next until one has', async () => {
    const commits: number[][] = [];
    const releases: Array<() => void> = [];
    const group = new GroupCommit<number, number>({
      commit: async (items) => {
        commits.push(items);
        await new Promise<void>((resolve) => releases.push(resolve));
        return items;
      },
      weigh: () => 1,
      maxWeight: 2,
      maxInFlight: 2,
    });
    const all = [1, 2, 3, 4, 5, 6].map((n) => group.submit(n));
    await new Promise((resolve) => setTimeout(resolve, 10));
    // Two groups of two are committing at once; the third waits for a free slot.
    expect(commits).toEqual([
      [1, 2],
      [3, 4],
    ]);
    releases.shift()?.();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(commits).toEqual([
      [1, 2],
      [3, 4],
      [5, 6],
    ]);
    for (const release of releases.splice(0)) release();
    expect(await Promise.all(all)).toEqual([1, 2, 3, 4, 5, 6]);
    await group.idle();
  });
});
