import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ENGINES, testStore, type TestStore } from '../../test/support/stores.js';
import { BridgeError } from '../errors.js';
import { createMetricsRegistry } from '../metrics.js';
import type { ChangeRecord } from '../records.js';
import type { Store } from '../store/index.js';
import type { ParseBatch } from './list-parse.js';
import { createListWorker, type ListWorker } from './list-worker.js';
import { createPoller, type Poller, type PollerOptions } from './poller.js';
import { initialDoneKey } from './snapshot.js';
import { memoryLists, recordingOutbox, testStudent, testUser, type MemoryLists, type RecordingOutbox } from '../../test/support/poll.js';

const log = pino({ level: 'silent' });
const ids = (records: readonly { id: string }[]) => records.map((r) => r.id);
const injected = () => new BridgeError('store.unavailable', 'disk full (injected)', { retryable: true });

/** A list worker that tells which keys of a stream it handed over parsed (not recognised by their bytes). */
function watchedWorker(stream: string, parsed: number[]): ListWorker {
  const worker = createListWorker();
  return {
    ...worker,
    parse: (s, body, options, sink) =>
      worker.parse(s, body, options, {
        batch(batch: ParseBatch) {
          if (s === stream) parsed.push(...batch.keys, ...(batch.fresh?.keys ?? []));
          return sink.batch(batch);
        },
      }),
  };
}

describe.each(ENGINES)('poller on %s', (engine) => {
  let made: TestStore;
  let store: Store;
  let lists: MemoryLists;
  let outbox: RecordingOutbox;
  let poller: Poller;
  const pollers: Poller[] = [];

  function makePoller(patch: Partial<PollerOptions> = {}): Poller {
    const made = createPoller({
      store, upstream: lists, outbox, log, metrics: createMetricsRegistry(),
      poll: { initial: 'emit', maxDeleteRatio: 0.2 }, applyChunk: 3, ...patch,
    });
    pollers.push(made);
    return made;
  }

  beforeEach(async () => {
    made = await testStore(engine);
    store = made.store;
    lists = memoryLists(
      Array.from({ length: 10 }, (_, i) => testStudent(i + 1)),
      Array.from({ length: 10 }, (_, i) => testUser(i + 1)),
    );
    outbox = recordingOutbox(store);
    poller = makePoller();
    await poller.start();
  });

  afterEach(async () => {
    for (const p of pollers.splice(0)) await p.stop();
    await made.cleanup();
  });

  it('first cycle emits everything as created, then a no-change cycle writes nothing', async () => {
    const predicted = ids((await poller.runCycle({ dryRun: true })).changes ?? []);
    const first = await poller.runCycle({ trigger: 'test' });
    expect(first).toMatchObject({ outcome: 'ok', streams: { students: { fetched: 10, created: 10, initial: 'emit' }, users: { created: 10 } } });
    // The created changes are delivered from the snapshot (created ranges), with the ids a dry run gives.
    expect(ids(await outbox.records())).toEqual(predicted);
    expect(predicted).toHaveLength(20);
    expect(await store.snapshot.size('students')).toBe(10);
    expect(await store.state.get(initialDoneKey('users'))).toMatchObject({ mode: 'emit' });
    expect(outbox.notified).toBeGreaterThan(0);
    expect(Object.keys(first.phases)).toEqual(['readMs', 'checkMs', 'commitMs']);
    const phaseTotal = Object.values(first.phases).reduce((a, b) => a + b, 0);
    expect(Object.values(first.phases).every((ms) => ms >= 0) && phaseTotal <= first.durationMs).toBe(true);

    const writes = [vi.spyOn(store.snapshot, 'stageChanges'), vi.spyOn(store.snapshot, 'applyChanges'), vi.spyOn(store.snapshot, 'applyFresh')];
    const second = await poller.runCycle();
    expect(second.outcome).toBe('ok');
    expect(second.streams.students).toEqual({ fetched: 10, created: 0, updated: 0, deleted: 0, baselined: 0 });
    for (const write of writes) expect(write).not.toHaveBeenCalled();
  });

  it('a created change keeps the record as the first cycle saw it, and goes before later changes of its key', async () => {
    // Nothing is delivered between the cycles: the second one finds every created change still owed.
    await poller.runCycle();
    lists.students[7] = testStudent(8, 'Zmiana8');
    lists.users = lists.users.filter((u) => u.id !== 9);
    const second = await poller.runCycle();
    expect(second.streams).toMatchObject({ students: { updated: 1 }, users: { deleted: 1 } });
    const records = (await outbox.records()) as ChangeRecord[];
    expect(records).toHaveLength(22);
    const ofKey = (stream: string, key: number) => records.filter((r) => r.stream === stream && r.key === key);
    expect(ofKey('students', 8).map((r) => r.op)).toEqual(['created', 'updated']);
    expect(ofKey('students', 8)[0]!.record).toMatchObject({ user: { lastName: 'Nazwisko8' } });
    expect(ofKey('students', 8)[1]!.record).toMatchObject({ user: { lastName: 'Zmiana8' } });
    expect(ofKey('users', 9).map((r) => r.op)).toEqual(['created', 'deleted']);
    expect(ofKey('users', 9)[0]!.record).toMatchObject({ lastName: 'Nazwisko9' });
  });

  it('a stream whose first list was empty gets its first records as created changes', async () => {
    lists.students = [];
    expect((await poller.runCycle()).streams.students).toMatchObject({ fetched: 0, created: 0, initial: 'emit' });
    const before = (await outbox.records()).length;
    lists.students = [testStudent(4), testStudent(2), testStudent(9)];
    const predicted = ids((await poller.runCycle({ dryRun: true })).changes ?? []);
    expect((await poller.runCycle()).streams.students).toMatchObject({ fetched: 3, created: 3 });
    expect(ids((await outbox.records()).slice(before))).toEqual(predicted);
    expect(predicted).toHaveLength(3);
  });

  it('baseline records the first cycle silently and reports later changes', async () => {
    await poller.stop();
    poller = makePoller({ poll: { initial: 'baseline', maxDeleteRatio: 0.2 } });
    expect((await poller.runCycle()).streams.students).toMatchObject({ baselined: 10, created: 0, initial: 'baseline' });
    expect(await outbox.records()).toEqual([]);
    lists.students[2] = testStudent(3, 'Nowak');
    lists.students.push(testStudent(11));
    const result = await poller.runCycle();
    expect(result.streams.students).toMatchObject({ created: 1, updated: 1, baselined: 0 });
    expect(result.streams.students.initial).toBeUndefined();
    expect((await outbox.records()).map((r) => (r as ChangeRecord).op)).toEqual(['updated', 'created']);
  });

  it('an empty list aborts without touching the snapshot, and readiness recovers on success', async () => {
    await poller.runCycle();
    const before = await store.snapshot.scan('students', undefined, 100);
    lists.students = [];
    const aborted = await poller.runCycle();
    expect(aborted).toMatchObject({ outcome: 'aborted', reason: 'empty_list', stream: 'students' });
    expect(await store.snapshot.scan('students', undefined, 100)).toEqual(before);
    expect(poller.readiness()).toMatchObject({ ok: false });
    expect(poller.lastResult()?.outcome).toBe('aborted');
    lists.students = Array.from({ length: 10 }, (_, i) => testStudent(i + 1));
    expect((await poller.runCycle()).outcome).toBe('ok');
    expect(poller.readiness()).toEqual({ ok: true });
  });

  it('the mass-delete guard of one stream stops the other stream too', async () => {
    await poller.runCycle();
    const count = (await outbox.records()).length;
    lists.users = lists.users.slice(0, 7); // 30% of users vanish
    lists.students[0] = testStudent(1, 'Nowak');
    const result = await poller.runCycle();
    expect(result).toMatchObject({ outcome: 'aborted', reason: 'mass_delete', stream: 'users' });
    expect(await outbox.records()).toHaveLength(count);
    lists.users = Array.from({ length: 10 }, (_, i) => testUser(i + 1)).filter((u) => u.id !== 4 && u.id !== 9); // 20%: allowed
    expect((await poller.runCycle()).streams).toMatchObject({ users: { deleted: 2 }, students: { updated: 1 } });
  });

  it('a list holding an id twice aborts and stores nothing of either stream', async () => {
    lists.users.push(testUser(3));
    expect(await poller.runCycle()).toMatchObject({ outcome: 'aborted', reason: 'duplicate_id', stream: 'users' });
    expect(await store.snapshot.size('users')).toBe(0);
    expect(await store.snapshot.size('students')).toBe(0);
  });

  it('holds deliveries back while it applies, and lets them go after, also when applying fails', async () => {
    const heldAtApply: number[] = [];
    let fail = false;
    for (const name of ['applyFresh', 'applyChanges'] as const) {
      const real = store.snapshot[name].bind(store.snapshot) as (...args: unknown[]) => Promise<unknown>;
      vi.spyOn(store.snapshot, name).mockImplementation(((...args: unknown[]) => {
        heldAtApply.push(outbox.held);
        return fail ? Promise.reject(injected()) : real(...args);
      }) as never);
    }
    expect((await poller.runCycle()).outcome).toBe('ok');
    expect(heldAtApply).toEqual([1, 1]);
    expect(outbox.held).toBe(0);
    lists.students.push(testStudent(11));
    fail = true;
    expect((await poller.runCycle()).outcome).toBe('failed');
    expect(outbox.held).toBe(0);
  });

  it('applying failing mid-cycle, then a clean re-run: the same ids, nothing lost or doubled', async () => {
    await poller.runCycle();
    for (const id of [2, 5, 8, 9]) lists.students[id - 1] = testStudent(id, `Zmiana${id}`);
    lists.students.push(testStudent(11));
    const expected = ids((await poller.runCycle({ dryRun: true })).changes ?? []);
    expect(expected).toHaveLength(5);
    const before = (await outbox.records()).length;
    const real = store.snapshot.applyChanges.bind(store.snapshot);
    let calls = 0;
    const apply = vi.spyOn(store.snapshot, 'applyChanges').mockImplementation((stream, options) => (++calls === 2 ? Promise.reject(injected()) : real(stream, options)));
    expect(await poller.runCycle()).toMatchObject({ outcome: 'failed', reason: 'store.unavailable' });
    expect((await outbox.records()).length - before).toBe(3); // the first chunk, whole
    apply.mockRestore();
    expect((await poller.runCycle()).outcome).toBe('ok');
    expect(ids((await outbox.records()).slice(before)).sort()).toEqual([...expected].sort());
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

  it('parses only records whose bytes changed since the snapshot, also with a new worker that reads the index from the store', async () => {
    const parsed: number[] = [];
    await poller.stop();
    poller = makePoller({ lists: watchedWorker('students', parsed) });
    await poller.runCycle();
    expect(parsed).toHaveLength(10);
    parsed.length = 0;
    lists.students[4] = testStudent(5, 'Inna');
    expect((await poller.runCycle()).streams.students).toMatchObject({ fetched: 10, created: 0, updated: 1, deleted: 0 });
    expect(parsed).toEqual([5]);
    // A restarted daemon: a worker with no index of its own takes the stored one.
    await poller.stop();
    parsed.length = 0;
    poller = makePoller({ lists: watchedWorker('students', parsed) });
    lists.students[6] = testStudent(7, 'Inny');
    expect((await poller.runCycle()).streams.students).toMatchObject({ fetched: 10, updated: 1 });
    expect(parsed).toEqual([7]);
  });

  it('applying failing halfway leaves no shortcut behind: a record sent again as it was before is diffed', async () => {
    await poller.runCycle();
    for (const id of [1, 2, 3, 4, 5, 6, 7]) lists.students[id - 1] = testStudent(id, `Zmiana${id}`);
    const real = store.snapshot.applyChanges.bind(store.snapshot);
    let calls = 0;
    const apply = vi.spyOn(store.snapshot, 'applyChanges').mockImplementation((stream, options) => (++calls === 2 ? Promise.reject(injected()) : real(stream, options)));
    expect(await poller.runCycle()).toMatchObject({ outcome: 'failed', reason: 'store.unavailable' });
    apply.mockRestore();
    // The first chunk (students 1-3) was applied; now student 1 comes back byte for byte as it was
    // before. The snapshot says Zmiana1, so that is a change, not a known record.
    expect((await store.snapshot.rows('students', [1]))[0]!.body).toContain('Zmiana1');
    lists.students[0] = testStudent(1);
    const before = (await outbox.records()).length;
    expect((await poller.runCycle()).outcome).toBe('ok');
    const back = ((await outbox.records()).slice(before) as ChangeRecord[]).filter((r) => r.stream === 'students' && r.key === 1);
    expect(back.map((r) => r.op)).toEqual(['updated']);
    expect(back[0]!.changes.some((c) => 'from' in c && c.from === 'Zmiana1')).toBe(true);
  });

  it('a dry run reports the changes and writes nothing', async () => {
    const writes = (['begin', 'stageFresh', 'stageChanges', 'applyFresh', 'applyChanges'] as const).map((name) => vi.spyOn(store.snapshot, name));
    const result = await poller.runCycle({ dryRun: true });
    expect(result).toMatchObject({ outcome: 'ok', dryRun: true });
    expect(Object.keys(result.phases)).toEqual(['readMs', 'checkMs']); // no commit phase
    expect(result.changes).toHaveLength(20);
    for (const write of writes) expect(write).not.toHaveBeenCalled();
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
  });

  it('an upstream failure is a failed cycle with its code, and stores nothing', async () => {
    lists.listUsers = () => Promise.reject(new BridgeError('upstream.invalid_json', 'truncated body'));
    expect(await poller.runCycle()).toMatchObject({ outcome: 'failed', reason: 'upstream.invalid_json' });
    expect(await store.snapshot.size('students')).toBe(0);
  });

  it('a failed read stops the other before the cycle ends, so nothing of it is staged later', async () => {
    let stopped = false;
    lists.listStudents = (opts) => new Promise((_, reject) => {
      opts?.signal?.addEventListener('abort', () => {
        stopped = true;
        reject(opts.signal!.reason);
      }, { once: true });
    });
    lists.listUsers = () => Promise.reject(new BridgeError('upstream.invalid_json', 'truncated body'));
    expect(await poller.runCycle()).toMatchObject({ outcome: 'failed', reason: 'upstream.invalid_json' });
    expect(stopped).toBe(true);
  });

  it('a list that fails after some records were diffed applies nothing, and the next cycle finds the same changes', async () => {
    await poller.runCycle();
    const committed = (await outbox.records()).length;
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
    expect(await outbox.records()).toHaveLength(committed);
    lists.fetchList = whole;
    expect((await poller.runCycle()).outcome).toBe('ok');
    expect((await outbox.records()).slice(committed).map((c) => c.id)).toEqual(expected);
  });

  it('counts cycles, changes, aborts and what the backlog still owes in metrics', async () => {
    const metrics = createMetricsRegistry();
    await poller.stop();
    poller = makePoller({ metrics });
    await poller.runCycle();
    expect(await metrics.metrics()).toContain('schoolbridge_poll_backlog_records{stream="users"} 10');
    await outbox.records();
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
