/**
 * First contacts: when each held-out or sampled unit of a running holdout was first seen by an
 * assign call in an experiment the holdout covers. A holdout's snapshot counts each unit's events
 * from then on, as an experiment's count from the exposure.
 *
 * Assignment stays cheap: the two buckets are hashes of the unit id (no I/O), and each process
 * remembers the contacts it has recorded, so a unit costs a write once per process (again only
 * after the memory is full and cleared). New contacts go to the database in groups, as first
 * assignments do (one transaction, one commit for many requests; on SQLite, on the writer thread),
 * and the assign call that found one waits for its group, so a snapshot computed after the answer
 * sees it. Each row is an insert-if-absent that keeps the earliest time when two processes race.
 */
import type { Tx } from '../../db/database.js';
import { GroupCommit } from '../../db/group-commit.js';
import type { WriteRunner, WriteTask } from '../../db/write-tasks.js';
import { contactBuckets, type HoldoutRule } from './membership.js';

export interface ContactWrite {
  holdoutId: string;
  workspaceId: string;
  unitId: string;
  bucket: number;
  sampleBucket: number;
  firstSeenAt: number;
}

const keyOf = (holdoutId: string, unitId: string) => `${holdoutId}\u0000${unitId}`;

/** Writes a group of contacts in the caller's transaction, in (holdout, unit) order so concurrent groups lock rows alike. */
export const writeHoldoutContacts: WriteTask<{ items: ContactWrite[] }, null> = Object.assign(
  async (trx: Tx, { items }: { items: ContactWrite[] }): Promise<null> => {
    const earliest = new Map<string, ContactWrite>();
    for (const item of items) {
      const key = keyOf(item.holdoutId, item.unitId);
      const known = earliest.get(key);
      if (!known || item.firstSeenAt < known.firstSeenAt) earliest.set(key, item);
    }
    const rows = [...earliest.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, item]) => ({
        holdout_id: item.holdoutId,
        unit_id: item.unitId,
        workspace_id: item.workspaceId,
        bucket: item.bucket,
        sample_bucket: item.sampleBucket,
        first_seen_at: item.firstSeenAt,
      }));
    if (rows.length === 0) return null;
    await trx
      .insertInto('holdout_contacts')
      .values(rows)
      .onConflict((oc) =>
        oc
          .columns(['holdout_id', 'unit_id'])
          .doUpdateSet({ first_seen_at: (eb) => eb.ref('excluded.first_seen_at') })
          .whereRef('excluded.first_seen_at', '<', 'holdout_contacts.first_seen_at'),
      )
      .execute();
    return null;
  },
  { writerTask: 'holdouts.contacts' },
);

/** Contacts this process remembers having recorded before it clears the memory and starts again. */
const REMEMBERED_CONTACTS = 200_000;

export class ContactRecorder {
  readonly #writes: GroupCommit<ContactWrite, null>;
  readonly #now: () => number;
  readonly #recorded = new Set<string>();

  constructor(writes: WriteRunner, now: () => number) {
    this.#now = now;
    this.#writes = new GroupCommit({ commit: (items) => this.#commit(writes, items), weigh: () => 1, maxWeight: 500 });
  }

  /** The contacts an assign call of `unitId` makes that this process has not recorded: nearly always none. */
  unseen(workspaceId: string, rules: readonly HoldoutRule[], unitId: string): ContactWrite[] {
    const found: ContactWrite[] = [];
    for (const rule of rules) {
      if (rule.sampleSalt === undefined || this.#recorded.has(keyOf(rule.id, unitId))) continue;
      const buckets = contactBuckets({ salt: rule.salt, percent: rule.percent, sampleSalt: rule.sampleSalt }, unitId);
      if (buckets) found.push({ holdoutId: rule.id, workspaceId, unitId, ...buckets, firstSeenAt: this.#now() });
    }
    return found;
  }

  /** Records the contacts (with others arriving together) and remembers them. */
  async record(contacts: readonly ContactWrite[]): Promise<void> {
    await Promise.all(contacts.map((contact) => this.#writes.submit(contact)));
    if (this.#recorded.size + contacts.length > REMEMBERED_CONTACTS) this.#recorded.clear();
    for (const contact of contacts) this.#recorded.add(keyOf(contact.holdoutId, contact.unitId));
  }

  async #commit(writes: WriteRunner, items: ContactWrite[]): Promise<null[]> {
    await writes.run(writeHoldoutContacts, { items });
    return items.map(() => null);
  }
}
