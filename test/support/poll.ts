import { createdChangeJson as createdJson, type AnyRecord, type Stream } from '../../src/records.js';
import type { StatePatch, Store } from '../../src/store/index.js';
import type { Group } from '../../src/streams/index.js';
import type { CallOptions, Student, User } from '../../src/upstream/index.js';
import type { ListSource, OutboxPort } from '../../src/poll/ports.js';

/**
 * Test twins for the poller's ports. `recordingOutbox` is the outbox as the poller sees it, on a real
 * store: every stream goes to one connector, `test`, whose deliveries `records()` takes out of the
 * store in delivery order (a key's next record only after the one before it) and keeps.
 */
export const TEST_CONNECTOR = 'test';

export interface RecordingOutbox extends OutboxPort {
  /** Every record enqueued so far, in the order the store hands them out. */
  records(): Promise<AnyRecord[]>;
  notified: number;
  /** Holds taken by holdDeliveries and not released yet. */
  held: number;
}

export function recordingOutbox(store: Store): RecordingOutbox {
  const taken: AnyRecord[] = [];
  const outbox: RecordingOutbox = {
    notified: 0,
    held: 0,
    subscribers: (_stream: Stream) => [TEST_CONNECTOR],
    async enqueue(records: readonly AnyRecord[], state?: StatePatch) {
      const plan = records.map((r) => ({ id: r.id, stream: r.stream, orderKey: `${r.stream}:${String(r.key)}`, json: JSON.stringify(r), connectors: [TEST_CONNECTOR] }));
      return store.outbox.enqueue(plan, state);
    },
    holdDeliveries() {
      outbox.held += 1;
      let released = false;
      return () => {
        if (!released) outbox.held -= 1;
        released = true;
      };
    },
    notify() {
      outbox.notified += 1;
    },
    async records() {
      // Far ahead of any clock: everything enqueued is due.
      const now = Date.now() + 365 * 86_400_000;
      for (;;) {
        const claimed = await store.outbox.claim({ connector: TEST_CONNECTOR, limit: 100, now, leaseMs: 60_000 });
        if (claimed.length === 0) return [...taken];
        for (const c of claimed) {
          const json = c.json ?? (c.created && createdJson(c.created));
          if (json === undefined) throw new Error(`no record for ${c.delivery.id}`);
          taken.push(JSON.parse(json) as AnyRecord);
        }
        await store.outbox.settle(claimed.map((c) => ({
          id: c.delivery.id, fence: c.delivery.fence, status: 'done' as const, at: now, connector: TEST_CONNECTOR, ...(c.delivery.range ? { range: c.delivery.range } : {}),
        })));
      }
    },
  };
  return outbox;
}

/** An upstream whose lists a test sets; each call returns (or visits) fresh copies. */
export interface MemoryLists extends ListSource {
  students: Student[];
  users: User[];
  groups: Group[];
  /** When set, the next list call waits for it (to hold a cycle mid-flight). */
  gate: Promise<void> | undefined;
  /** What a read of the students' or users' list gets: a test may replace them (a failing read). */
  listStudents(opts?: CallOptions): Promise<Student[]>;
  listUsers(opts?: CallOptions): Promise<User[]>;
}

export function memoryLists(students: Student[] = [], users: User[] = [], groups: Group[] = []): MemoryLists {
  const lists: MemoryLists = {
    students,
    users,
    groups,
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
      const items = list === 'students' ? await lists.listStudents(opts) : list === 'users' ? await lists.listUsers(opts) : structuredClone(lists.groups);
      return read(jsonBody({ data: { [list]: items } }), {});
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
