import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BridgeError } from '../errors.js';
import { createMetricsRegistry } from '../metrics.js';
import type { ChangeRecord } from '../records.js';
import { createStore, type Store } from '../store/index.js';
import { createListWorker } from './list-worker.js';
import { createPoller, type Poller, type PollerOptions } from './poller.js';
import { initialDoneKey, snapshotCollection, STATE_COLLECTION } from './snapshot.js';
import { memoryLists, memoryOutbox, testStudent, testUser, type MemoryLists, type MemoryOutbox } from './testing.js';

const log = pino({ level: 'silent' });

let store: Store;
let lists: MemoryLists;
let outbox: MemoryOutbox;
let poller: Poller;

function makePoller(patch: Partial<PollerOptions> = {}): Poller {
  return createPoller({
    store, upstream: lists, outbox, log, metrics: createMetricsRegistry(),
    poll: { initial: 'emit', maxDeleteRatio: 0.2 }, chunkSize: 3, ...patch,
  });
}

beforeEach(async () => {
  store = createStore({ log });
  await store.start();
  lists = memoryLists(
    Array.from({ length: 10 }, (_, i) => testStudent(i + 1)),
    Array.from({ length: 10 }, (_, i) => testUser(i + 1)),
  );
  outbox = memoryOutbox(store);
  poller = makePoller();
  await poller.start();
});

afterEach(async () => {
  await poller.stop();
  await store.stop();
});

const ids = (records: readonly { id: string }[]) => records.map((r) => r.id);

describe('poller', () => {
  it('first cycle emits everything as created, then a no-change cycle writes nothing', async () => {
    const predicted = ids((await poller.runCycle({ dryRun: true })).changes ?? []);
    const first = await poller.runCycle({ trigger: 'test' });
    expect(first).toMatchObject({ outcome: 'ok', streams: { students: { fetched: 10, created: 10, initial: 'emit' }, users: { created: 10 } } });
    // The created changes follow the cycle through the backlog (backlog.ts), with the ids a dry run gives.
    await poller.flushBacklog();
    expect(outbox.records()).toHaveLength(20);
    expect(ids(outbox.records())).toEqual(predicted);
    expect(store.size(snapshotCollection('students'))).toBe(10);
    expect(store.has(STATE_COLLECTION, initialDoneKey('users'))).toBe(true);
    expect(outbox.notified).toBeGreaterThan(0);
    expect(Object.keys(first.phases)).toEqual(['readMs', 'checkMs', 'commitMs']);
    const phaseTotal = Object.values(first.phases).reduce((a, b) => a + b, 0);
    expect(Object.values(first.phases).every((ms) => ms >= 0) && phaseTotal <= first.durationMs).toBe(true);

    const commit = vi.spyOn(store, 'commit');
    const second = await poller.runCycle();
    expect(second.outcome).toBe('ok');
    expect(second.streams.students).toEqual({ fetched: 10, created: 0, updated: 0, deleted: 0, baselined: 0 });
    expect(commit).not.toHaveBeenCalled();
  });

  it("a later cycle puts a first cycle's backlog into the outbox before it moves the snapshot", async () => {
    // An outbox that never delivers, and a backlog that stops at 3 queued: most of it is left over.
    outbox.depth = () => outbox.records().length;
    poller = makePoller({ backlogHighWater: 3 });
    await poller.runCycle();
    await vi.waitFor(() => expect(outbox.records()).toHaveLength(3));
    lists.students[7] = testStudent(8, 'Zmiana8');
    lists.users = lists.users.filter((u) => u.id !== 9);
    const second = await poller.runCycle();
    expect(second.streams).toMatchObject({ students: { updated: 1 }, users: { deleted: 1 } });
    const records = outbox.records() as ChangeRecord[];
    expect(records).toHaveLength(22);
    const ofKey = (stream: string, key: number) => records.filter((r) => r.stream === stream && r.key === key);
    // Each created change holds the record as the first cycle saw it, and comes before the later change.
    expect(ofKey('students', 8).map((r) => r.op)).toEqual(['created', 'updated']);
    expect(ofKey('students', 8)[0]!.record).toMatchObject({ user: { lastName: 'Nazwisko8' } });
    expect(ofKey('users', 9).map((r) => r.op)).toEqual(['created', 'deleted']);
    expect(ofKey('users', 9)[0]!.record).toMatchObject({ lastName: 'Nazwisko9' });
  });

  it('a stream whose first list was empty gets its first records as created changes through the backlog too', async () => {
    lists.students = [];
    expect((await poller.runCycle()).streams.students).toMatchObject({ fetched: 0, created: 0, initial: 'emit' });
    await poller.flushBacklog();
    const before = outbox.records().length;
    lists.students = [testStudent(4), testStudent(2), testStudent(9)];
    const predicted = ids((await poller.runCycle({ dryRun: true })).changes ?? []);
    expect((await poller.runCycle()).streams.students).toMatchObject({ fetched: 3, created: 3 });
    await poller.flushBacklog();
    expect(ids(outbox.records().slice(before))).toEqual(predicted);
    expect(predicted).toHaveLength(3);
  });

  it('baseline records the first cycle silently and reports later changes', async () => {
    poller = makePoller({ poll: { initial: 'baseline', maxDeleteRatio: 0.2 } });
    expect((await poller.runCycle()).streams.students).toMatchObject({ baselined: 10, created: 0, initial: 'baseline' });
    expect(outbox.records()).toEqual([]);
    lists.students[2] = testStudent(3, 'Nowak');
    lists.students.push(testStudent(11));
    const result = await poller.runCycle();
    expect(result.streams.students).toMatchObject({ created: 1, updated: 1, baselined: 0 });
    expect(result.streams.students.initial).toBeUndefined();
    expect(outbox.records().map((r) => (r as ChangeRecord).op)).toEqual(['updated', 'created']);
  });

  it('an empty list aborts without touching the snapshot, and readiness recovers on success', async () => {
    await poller.runCycle();
    const before = [...store.entries(snapshotCollection('students'))];
    lists.students = [];
    const aborted = await poller.runCycle();
    expect(aborted).toMatchObject({ outcome: 'aborted', reason: 'empty_list', stream: 'students' });
    expect([...store.entries(snapshotCollection('students'))]).toEqual(before);
    expect(poller.readiness()).toMatchObject({ ok: false });
    expect(poller.lastResult()?.outcome).toBe('aborted');
    lists.students = Array.from({ length: 10 }, (_, i) => testStudent(i + 1));
    expect((await poller.runCycle()).outcome).toBe('ok');
    expect(poller.readiness()).toEqual({ ok: true });
  });

  it('the mass-delete guard of one stream stops the other stream too', async () => {
    await poller.runCycle();
    await poller.flushBacklog();
    lists.users = lists.users.slice(0, 7); // 30% of users vanish
    lists.students[0] = testStudent(1, 'Nowak');
    const count = outbox.records().length;
    const result = await poller.runCycle();
    expect(result).toMatchObject({ outcome: 'aborted', reason: 'mass_delete', stream: 'users' });
    expect(outbox.records()).toHaveLength(count);
    lists.users = Array.from({ length: 10 }, (_, i) => testUser(i + 1)).filter((u) => u.id !== 4 && u.id !== 9); // 20%: allowed
    expect((await poller.runCycle()).streams).toMatchObject({ users: { deleted: 2 }, students: { updated: 1 } });
  });

  it('a list holding an id twice never reaches the diff', async () => {
    lists.users.push(testUser(3));
    expect(await poller.runCycle()).toMatchObject({ outcome: 'aborted', reason: 'duplicate_id' });
    expect(store.size(snapshotCollection('users'))).toBe(0);
  });

  it('holds deliveries back while it commits, and lets them go after, also when a commit fails', async () => {
    const realCommit = store.commit.bind(store);
    const heldAtCommit: number[] = [];
    let fail = false;
    const commit = vi.spyOn(store, 'commit').mockImplementation((ops) => {
      // The cycle's commits (they move the snapshot), not the backlog's after it.
      if (ops.some((op) => op.c.startsWith('snapshot.'))) heldAtCommit.push(outbox.held);
      if (fail) return Promise.reject(new BridgeError('store.unavailable', 'disk full (injected)', { retryable: true }));
      return realCommit(ops);
    });
    expect((await poller.runCycle()).outcome).toBe('ok');
    expect(heldAtCommit.length).toBeGreaterThan(1);
    expect(heldAtCommit.every((held) => held === 1)).toBe(true);
    expect(outbox.held).toBe(0);
    lists.students.push(testStudent(11));
    fail = true;
    expect((await poller.runCycle()).outcome).toBe('failed');
    expect(outbox.held).toBe(0);
    commit.mockRestore();
  });

  it('a failing commit mid-cycle, then a clean re-run: the same ids, nothing lost or doubled', async () => {
    await poller.runCycle();
    await poller.flushBacklog();
    for (const id of [2, 5, 8, 9]) lists.students[id - 1] = testStudent(id, `Zmiana${id}`);
    lists.students.push(testStudent(11));
    const reference = await makePoller().runCycle({ dryRun: true });
    const expected = ids(reference.changes ?? []);
    expect(expected).toHaveLength(5);

    const realCommit = store.commit.bind(store);
    let calls = 0;
    const commit = vi.spyOn(store, 'commit').mockImplementation((ops) => {
      calls += 1;
      if (calls === 2) return Promise.reject(new BridgeError('store.unavailable', 'disk full (injected)', { retryable: true }));
      return realCommit(ops);
    });
    const before = outbox.records().length;
    const failed = await poller.runCycle();
    expect(failed).toMatchObject({ outcome: 'failed', reason: 'store.unavailable' });
    const committedFirst = outbox.records().slice(before);
    expect(committedFirst.length).toBeLessThan(5);
    commit.mockRestore();

    expect((await poller.runCycle()).outcome).toBe('ok');
    expect(ids(outbox.records().slice(before)).sort()).toEqual([...expected].sort());
    // and nothing further on a third run
    expect((await poller.runCycle()).streams.students).toMatchObject({ created: 0, updated: 0 });
  });

  it('starts the list worker\'s threads with itself only when asked (the daemon), else at the first read', async () => {
    const worker = createListWorker();
    const warm = vi.spyOn(worker, 'warm');
    await poller.stop();
    poller = makePoller({ lists: worker });
    await poller.start();
    expect(warm).not.toHaveBeenCalled();
    await poller.stop();
    poller = makePoller({ lists: worker, warmWorkers: true });
    await poller.start();
    expect(warm).toHaveBeenCalledTimes(1);
    expect((await poller.runCycle()).outcome).toBe('ok');
  });

  it('after a committed cycle, only records whose bytes changed are parsed and diffed', async () => {
    const parsed: string[] = [];
    const worker = createListWorker();
    await poller.stop();
    poller = makePoller({
      lists: {
        ...worker,
        parse: (stream, body, options, sink) =>
          worker.parse(stream, body, options, { ...sink, parsed: (pairs, fresh) => {
            if (stream === 'students') parsed.push(...pairs.filter((_, i) => i % 2 === 0));
            sink.parsed(pairs, fresh);
          } }),
      },
    });
    await poller.runCycle(); // this worker's first read: everything parsed, indexed once committed
    expect(parsed).toHaveLength(10);
    parsed.length = 0;
    lists.students[4] = testStudent(5, 'Inna');
    const result = await poller.runCycle();
    expect(result.streams.students).toMatchObject({ fetched: 10, created: 0, updated: 1, deleted: 0 });
    expect(parsed).toEqual(['5']);
  });

  it('a raw index naming a key the snapshot lacks makes the cycle read that list again in full', async () => {
    await poller.runCycle();
    const worker = createListWorker();
    const reads: boolean[] = [];
    await poller.stop();
    poller = makePoller({
      lists: {
        ...worker,
        parse: (stream, body, options, sink) => {
          if (stream === 'users') reads.push(options.useIndex);
          // A stale index: it claims a record by bytes whose key is in no snapshot.
          if (stream === 'users' && options.useIndex) sink.known(['999']);
          return worker.parse(stream, body, options, sink);
        },
      },
    });
    lists.users.push(testUser(11));
    const result = await poller.runCycle();
    expect(reads).toEqual([true, false]);
    expect(result.streams.users).toMatchObject({ fetched: 11, created: 1, deleted: 0 });
  });

  it('a commit failing halfway leaves no shortcut behind: a record sent again as it was before is diffed', async () => {
    await poller.runCycle(); // indexes every record's bytes
    await poller.flushBacklog();
    for (const id of [1, 2, 3, 4, 5, 6, 7]) lists.students[id - 1] = testStudent(id, `Zmiana${id}`);
    const realCommit = store.commit.bind(store);
    let calls = 0;
    const commit = vi.spyOn(store, 'commit').mockImplementation((ops) => {
      calls += 1;
      if (calls === 2) return Promise.reject(new BridgeError('store.unavailable', 'disk full (injected)', { retryable: true }));
      return realCommit(ops);
    });
    expect(await poller.runCycle()).toMatchObject({ outcome: 'failed', reason: 'store.unavailable' });
    commit.mockRestore();
    // The first chunk (students 1-3) was committed; now student 1 comes back byte for byte as it was
    // in the last whole cycle. The snapshot says Zmiana1, so that is a change, not a known record.
    expect(store.get<string>(snapshotCollection('students'), '1')).toContain('Zmiana1');
    lists.students[0] = testStudent(1);
    const before = outbox.records().length;
    expect((await poller.runCycle()).outcome).toBe('ok');
    const back = (outbox.records().slice(before) as ChangeRecord[]).filter((r) => r.stream === 'students' && r.key === 1);
    expect(back.map((r) => r.op)).toEqual(['updated']);
    expect(back[0]!.changes.some((c) => 'from' in c && c.from === 'Zmiana1')).toBe(true);
  });

  it('a dry run reports the changes and commits nothing', async () => {
    const commit = vi.spyOn(store, 'commit');
    const result = await poller.runCycle({ dryRun: true });
    expect(result).toMatchObject({ outcome: 'ok', dryRun: true });
    expect(Object.keys(result.phases)).toEqual(['readMs', 'checkMs']); // no commit phase
    expect(result.changes).toHaveLength(20);
    expect(commit).not.toHaveBeenCalled();
    expect(poller.lastResult()).toBeUndefined();
  });

  it('runs cycles one at a time', async () => {
    let open!: () => void;
    lists.gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const first = poller.runCycle();
    const second = poller.runCycle();
    expect(poller.busy()).toBe(true);
    lists.gate = undefined;
    open();
    const [a, b] = await Promise.all([first, second]);
    expect(a.streams.students.created).toBe(10);
    expect(b.streams.students.created).toBe(0);
    expect(poller.busy()).toBe(false);
  });

  it('stop aborts a cycle waiting on the upstream; later cycles report the poller stopped', async () => {
    lists.gate = new Promise<void>(() => {});
    const running = poller.runCycle();
    await poller.stop();
    expect(await running).toMatchObject({ outcome: 'failed', reason: 'poll.stopped' });
    expect(await poller.runCycle()).toMatchObject({ outcome: 'failed', reason: 'poll.stopped' });
    await poller.stop();
  });

  it('an upstream failure is a failed cycle with its code', async () => {
    lists.listUsers = () => Promise.reject(new BridgeError('upstream.invalid_json', 'truncated body'));
    expect(await poller.runCycle()).toMatchObject({ outcome: 'failed', reason: 'upstream.invalid_json' });
    expect(store.size(snapshotCollection('students'))).toBe(0);
  });

  it('a list that fails after some records were diffed commits nothing, and the next cycle finds the same changes', async () => {
    await poller.runCycle();
    await poller.flushBacklog();
    const committed = outbox.records().length;
    lists.students = lists.students.map((s) => (s.id === 2 ? testStudent(2, 'Renamed') : s));
    lists.users = lists.users.map((u) => (u.id === 1 ? testUser(1, 'Renamed') : u));
    const expected = (await poller.runCycle({ dryRun: true })).changes!.map((c) => c.id);
    expect(expected).toHaveLength(2);
    const whole = lists.fetchList;
    lists.fetchList = async (list, read, opts) => {
      if (list === 'students') return whole(list, read, opts);
      // The body breaks off in the seventh user: the six before it (the changed one among them) are parsed and diffed.
      const bytes = Buffer.from(JSON.stringify({ data: { users: lists.users } }));
      const cut = bytes.indexOf(Buffer.from('{"id":7,')) + 10;
      return read((async function* () {
        yield bytes.subarray(0, cut);
      })());
    };
    expect(await poller.runCycle()).toMatchObject({ outcome: 'failed', reason: 'upstream.invalid_json' });
    expect(outbox.records()).toHaveLength(committed);
    lists.fetchList = whole;
    expect((await poller.runCycle()).outcome).toBe('ok');
    expect(outbox.records().slice(committed).map((c) => c.id)).toEqual(expected);
  });

  it('counts cycles, changes and aborts in metrics', async () => {
    const metrics = createMetricsRegistry();
    outbox.depth = () => outbox.records().length; // never delivers: the backlog stops at 3 queued
    poller = makePoller({ metrics, backlogHighWater: 3 });
    await poller.runCycle();
    await vi.waitFor(() => expect(outbox.records()).toHaveLength(3));
    const pending = await metrics.metrics();
    expect(pending).toContain('schoolbridge_poll_backlog_records{stream="students"} 7');
    expect(pending).toContain('schoolbridge_poll_backlog_records{stream="users"} 10');
    expect(poller.backlogRemaining()).toBe(17);
    await poller.flushBacklog();
    lists.students = [];
    await poller.runCycle();
    const text = await metrics.metrics();
    expect(text).toContain('schoolbridge_poll_changes_total{stream="students",op="created"} 10');
    expect(text).toContain('schoolbridge_poll_aborted_total{reason="empty_list",stream="students"} 1');
    expect(text).toContain('schoolbridge_poll_cycles_total{outcome="ok"} 1');
    expect(text).toContain('schoolbridge_poll_snapshot_records{stream="users"} 10');
    expect(text).toContain('schoolbridge_poll_backlog_records{stream="users"} 0');
    expect(text).toMatch(/schoolbridge_poll_last_success_timestamp_seconds \d+/);
  });
});
