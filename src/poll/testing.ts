import type { AnyRecord } from '../records.js';
import type { Op, Store } from '../store/index.js';
import type { Student, UpstreamClient, User } from '../upstream/index.js';
import type { ListSource, OutboxPort } from './ports.js';

/**
 * Test twins for the poller's ports. `memoryOutbox` keeps enqueued records in a store collection,
 * so they are committed (or not) together with the snapshot exactly as the real outbox's entries are.
 */
export const TEST_OUTBOX = 'test.outbox';

export interface MemoryOutbox extends OutboxPort {
  /** Records enqueued and committed, in commit order. */
  records(): AnyRecord[];
  notified: number;
  /** Holds taken by holdDeliveries and not released yet. */
  held: number;
}

export function memoryOutbox(store: Store): MemoryOutbox {
  // Continue the sequence of entries already in the store (a reopened store).
  let sequence = 0;
  for (const [, entry] of store.entries<{ seq: number }>(TEST_OUTBOX)) sequence = Math.max(sequence, entry.seq);
  const outbox: MemoryOutbox = {
    notified: 0,
    held: 0,
    holdDeliveries() {
      outbox.held += 1;
      let released = false;
      return () => {
        if (!released) outbox.held -= 1;
        released = true;
      };
    },
    // Never delivers: nothing leaves the queue, and the backlog is never held back by it.
    depth: () => 0,
    on: () => () => {},
    enqueueOps(records) {
      const ops: Op[] = [];
      const seen = new Set<string>();
      for (const record of records) {
        if (store.has(TEST_OUTBOX, record.id) || seen.has(record.id)) continue;
        seen.add(record.id);
        ops.push({ op: 'put', c: TEST_OUTBOX, k: record.id, v: { seq: (sequence += 1), record } });
      }
      return ops;
    },
    notify() {
      outbox.notified += 1;
    },
    records() {
      return [...store.entries<{ seq: number; record: AnyRecord }>(TEST_OUTBOX)].map(([, v]) => v).sort((a, b) => a.seq - b.seq).map((v) => v.record);
    },
  };
  return outbox;
}

/** An upstream whose lists a test sets; each call returns (or visits) fresh copies. */
export interface MemoryLists extends ListSource, Pick<UpstreamClient, 'listStudents' | 'listUsers'> {
  students: Student[];
  users: User[];
  /** When set, the next list call waits for it (to hold a cycle mid-flight). */
  gate: Promise<void> | undefined;
}

export function memoryLists(students: Student[] = [], users: User[] = []): MemoryLists {
  const lists: MemoryLists = {
    students,
    users,
    gate: undefined,
    async listStudents(opts) {
      await waitGate(lists.gate, opts?.signal);
      return structuredClone(lists.students);
    },
    async listUsers(opts) {
      await waitGate(lists.gate, opts?.signal);
      return structuredClone(lists.users);
    },
    // Through the list methods, so a test that replaces listUsers (a failing read) affects the cycle
    // too. The body is the list as API v2 sends it, in small chunks, as a socket would deliver it.
    async fetchList(list, read, opts) {
      const items = list === 'students' ? await lists.listStudents(opts) : await lists.listUsers(opts);
      return read(jsonBody({ data: { [list]: items } }));
    },
  };
  return lists;
}

/** A JSON value as a response body of 64 KiB chunks. */
export async function* jsonBody(value: unknown, chunkBytes = 64 * 1024): AsyncIterable<Uint8Array> {
  const bytes = Buffer.from(JSON.stringify(value));
  for (let offset = 0; offset < bytes.length; offset += chunkBytes) yield bytes.subarray(offset, offset + chunkBytes);
}

async function waitGate(gate: Promise<void> | undefined, signal: AbortSignal | undefined): Promise<void> {
  if (!gate) return;
  await new Promise<void>((resolve, reject) => {
    gate.then(resolve, reject);
    signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

export const testStudent = (id: number, lastName = `Nazwisko${id}`): Student => ({
  id, isAdult: 0, isActive: 1, createdAt: '2026-01-01 10:00:00', updatedAt: '2026-01-01 10:00:00',
  user: {
    id: id * 10, login: `u${id}`, firstName: 'Anna', lastName, isArchived: 0,
    additionalData: { id: id * 10, email: `u${id}@example.pl`, city: 'Łódź' },
    parentUser: { id: id * 10 + 1, firstName: null, lastName: null, isArchived: 0, additionalData: { id: null, email: null }, parentUser: null },
  },
});

export const testUser = (id: number, lastName = `Nazwisko${id}`): User => ({
  id, login: `u${id}`, firstName: 'Anna', lastName, isArchived: 0, additionalData: { id, email: null }, parentUser: null,
});
