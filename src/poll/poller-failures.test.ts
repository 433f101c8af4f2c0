import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ENGINES } from '../../test/support/stores.js';
import { BridgeError } from '../errors.js';
import type { Store } from '../store/index.js';
import { createPgStore } from '../store/postgres/pg-store.js';
import { MAX_HOLD_MS, type Poller } from './poller.js';
import { testStudent, testUser, type MemoryLists, type RecordingOutbox } from '../../test/support/poll.js';
import { pollerPerTest } from '../../test/support/poller-setup.js';
import { TEST_NOW_MS, testClock } from '../../test/support/clock.js';

/** Cycles that abort or fail before they apply: the guards, failed reads and a stopped poller store nothing. */
describe.each(ENGINES)('poller on %s', (engine) => {
  let store: Store;
  let lists: MemoryLists;
  let outbox: RecordingOutbox;
  let poller: Poller;
  const { makePoller } = pollerPerTest(engine, (fixture) => ({ store, lists, outbox, poller } = fixture));

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

  it('a later success on another replica ends what an abort here said; a cycle refused for another\'s is no failure', async () => {
    await poller.runCycle();
    lists.students = [];
    const aborted = await poller.runCycle();
    expect(poller.readiness()).toMatchObject({ ok: false });
    const at = (ms: number) => new Date(Date.parse(aborted.startedAt) + ms).toISOString();
    // Another replica's cycle from before this one's, or one that failed too, changes nothing.
    poller.recorded({ startedAt: at(-1000), outcome: 'ok', trigger: 'schedule', durationMs: 1 });
    poller.recorded({ startedAt: at(1000), outcome: 'aborted', trigger: 'schedule', durationMs: 1 });
    expect(poller.readiness()).toMatchObject({ ok: false });
    poller.recorded({ startedAt: at(1000), outcome: 'ok', trigger: 'manual', durationMs: 1, replica: 'another' });
    expect(poller.readiness()).toEqual({ ok: true });
    // Refused as another process runs a cycle (a `sync` beside the daemon): that one's outcome counts.
    lists.students = Array.from({ length: 10 }, (_, i) => testStudent(i + 1));
    const listUsers = lists.listUsers;
    lists.listUsers = () => Promise.reject(new BridgeError('poll.busy', 'another process is running a poll cycle on this database (stream users); try again when it is done', { retryable: true }));
    const ran = poller.lastResult();
    expect(await poller.runCycle()).toMatchObject({ outcome: 'failed', reason: 'poll.busy' });
    expect(poller.readiness()).toEqual({ ok: true });
    // It ran nothing here: neither this replica's last cycle, nor every replica's, nor the history says it.
    expect(poller.lastResult()).toBe(ran);
    lists.listUsers = listUsers;
    const next = await poller.runCycle();
    await expect.poll(() => store.state.get('poll.lastCycle')).toMatchObject({ startedAt: next.startedAt, outcome: 'ok' });
    await expect.poll(async () => (await store.history.runs({ since: 0, limit: 100 })).map((run) => run.startedAt)).toContain(Date.parse(next.startedAt));
    const runs = await store.history.runs({ since: 0, limit: 100 });
    expect(runs.map((run) => run.outcome)).toEqual(['ok', 'aborted', 'ok']);
  });

  it('says what an abort on another replica said, when that cycle is later than its own, and records its own so', async () => {
    await poller.runCycle();
    const own = poller.lastResult()!;
    const at = (ms: number) => new Date(Date.parse(own.startedAt) + ms).toISOString();
    const guard = 'last poll cycle aborted (mass_delete): 5 of 10 students (50.0%) would be deleted, more than poll.maxDeleteRatio 0.2';
    poller.recorded({ startedAt: at(-1000), outcome: 'aborted', trigger: 'schedule', durationMs: 1, replica: 'another', notReady: guard });
    expect(poller.readiness()).toEqual({ ok: true });
    poller.recorded({ startedAt: at(1000), outcome: 'aborted', trigger: 'schedule', durationMs: 1, replica: 'another', notReady: guard });
    expect(poller.readiness()).toEqual({ ok: false, reason: `${guard} (on replica another)` });
    poller.recorded({ startedAt: at(2000), outcome: 'ok', trigger: 'schedule', durationMs: 1, replica: 'another' });
    expect(poller.readiness()).toEqual({ ok: true });
    // This replica's own abort goes to the store with what it says, for the others to say it.
    lists.students = lists.students.slice(0, 5);
    expect(await poller.runCycle()).toMatchObject({ outcome: 'aborted', reason: 'mass_delete' });
    await expect.poll(() => store.state.get('poll.lastCycle')).toMatchObject({ outcome: 'aborted', notReady: guard });
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

  it('an upstream that asks to wait holds scheduled cycles until then; a cycle that succeeds lets go', async () => {
    const clock = testClock(TEST_NOW_MS);
    await poller.stop();
    poller = makePoller({ clock });
    const listUsers = lists.listUsers;
    lists.listUsers = () => Promise.reject(new BridgeError('upstream.http', 'upstream answered HTTP 429 (it asks to wait 45 s)', { status: 429, retryable: true, retryAfterMs: 45_000 }));
    expect(await poller.runCycle()).toMatchObject({ outcome: 'failed', reason: 'upstream.http', retryAfterMs: 45_000 });
    expect(poller.heldUntil()).toBe(new Date(TEST_NOW_MS + 45_000).toISOString());
    clock.advance(45_001);
    expect(poller.heldUntil()).toBeUndefined();
    // A failure that asks nothing holds nothing; a success lets go.
    clock.advance(-45_001);
    expect(poller.heldUntil()).toBe(new Date(TEST_NOW_MS + 45_000).toISOString());
    lists.listUsers = listUsers;
    expect((await poller.runCycle()).outcome).toBe('ok');
    expect(poller.heldUntil()).toBeUndefined();
    lists.listUsers = () => Promise.reject(new BridgeError('upstream.http', 'upstream answered HTTP 503', { status: 503, retryable: true }));
    expect(await poller.runCycle()).not.toHaveProperty('retryAfterMs');
    expect(poller.heldUntil()).toBeUndefined();
  });

  it('holds scheduled cycles an hour at most, however long the upstream asks to wait', async () => {
    const clock = testClock(TEST_NOW_MS);
    await poller.stop();
    poller = makePoller({ clock });
    lists.listUsers = () => Promise.reject(new BridgeError('upstream.http', 'upstream answered HTTP 429 (it asks to wait 28 h)', { status: 429, retryable: true, retryAfterMs: 99_999_000 }));
    expect(await poller.runCycle()).toMatchObject({ outcome: 'failed', retryAfterMs: 99_999_000 });
    expect(poller.heldUntil()).toBe(new Date(TEST_NOW_MS + MAX_HOLD_MS).toISOString());
    clock.advance(MAX_HOLD_MS + 1);
    expect(poller.heldUntil()).toBeUndefined();
  });

  it('a fault of ours is a failed cycle too: readiness says so until a cycle succeeds', async () => {
    const listUsers = lists.listUsers;
    lists.listUsers = () => Promise.reject(new RangeError('Maximum call stack size exceeded'));
    expect(await poller.runCycle()).toMatchObject({ outcome: 'failed', reason: 'poll.internal', message: 'Maximum call stack size exceeded' });
    expect(poller.readiness()).toEqual({ ok: false, reason: 'last poll cycle failed (poll.internal): Maximum call stack size exceeded' });
    expect(poller.lastResult()?.outcome).toBe('failed');
    lists.listUsers = listUsers;
    expect((await poller.runCycle()).outcome).toBe('ok');
    expect(poller.readiness()).toEqual({ ok: true });
    // An upstream failure is the upstream check's to report, not the poll's.
    lists.listUsers = () => Promise.reject(new BridgeError('upstream.http', 'upstream answered HTTP 503', { status: 503, retryable: true }));
    expect((await poller.runCycle()).outcome).toBe('failed');
    expect(poller.readiness()).toEqual({ ok: true });
  });

  it('a failed read stops the other before the cycle ends, so nothing of it is staged later', async () => {
    let stopped = false;
    let reading!: () => void;
    const studentsRead = new Promise<void>((resolve) => (reading = resolve));
    lists.listStudents = (opts) => new Promise((_, reject) => {
      opts?.signal?.addEventListener('abort', () => {
        stopped = true;
        reject(opts.signal!.reason);
      }, { once: true });
      reading();
    });
    // The users' read fails once the students' is under way (each first asks the store a few
    // things, in no set order).
    lists.listUsers = async () => {
      await studentsRead;
      throw new BridgeError('upstream.invalid_json', 'truncated body');
    };
    expect(await poller.runCycle()).toMatchObject({ outcome: 'failed', reason: 'upstream.invalid_json' });
    expect(stopped).toBe(true);
  });

  it('a list whose answer\'s headers say it is one page of more fails the cycle, with nothing deleted', async () => {
    await poller.runCycle();
    const committed = (await outbox.records()).length;
    const whole = lists.fetchList;
    lists.students = lists.students.slice(1);
    // What the headers said (list/headers.ts) goes with the body to the list worker.
    lists.fetchList = (list, read, opts) => whole(list, (body) => read(body, { total: { path: 'header x-total-count', n: lists.students.length + 1 } }), opts);
    expect(await poller.runCycle()).toMatchObject({ outcome: 'failed', reason: 'upstream.invalid_response' });
    expect(await outbox.records()).toHaveLength(committed);
    lists.fetchList = whole;
    expect((await poller.runCycle()).outcome).toBe('ok');
    expect((await outbox.records()).slice(committed).map((c) => ('op' in c ? c.op : undefined))).toEqual(['deleted']);
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
      })(), {});
    };
    expect(await poller.runCycle()).toMatchObject({ outcome: 'failed', reason: 'upstream.invalid_json' });
    expect(await outbox.records()).toHaveLength(committed);
    lists.fetchList = whole;
    expect((await poller.runCycle()).outcome).toBe('ok');
    expect((await outbox.records()).slice(committed).map((c) => c.id)).toEqual(expected);
  });
});

describe('poller on postgres beside another process', () => {
  let where: string;
  let lists: MemoryLists;
  let poller: Poller;
  pollerPerTest('postgres', (fixture) => ({ where, lists, poller } = fixture));

  it('a cycle takes the staging of all its streams before it reads: refused while another process stages one, it holds none', async () => {
    const other = createPgStore({ url: where, log: pino({ level: 'silent' }) });
    await other.start();
    try {
      await other.snapshot.begin('users', 'fresh');
      let reads = 0;
      const read = lists.listStudents;
      lists.listStudents = (opts) => {
        reads += 1;
        return read(opts);
      };
      expect(await poller.runCycle()).toMatchObject({ outcome: 'failed', reason: 'poll.busy' });
      expect(reads).toBe(0);
      // It left the students stream free: the other process's cycle takes it too.
      await other.snapshot.reserve(['students', 'users']);
      await other.snapshot.discard('users');
      await other.snapshot.discard('students');
      expect((await poller.runCycle()).outcome).toBe('ok');
      expect(reads).toBe(1);
    } finally {
      await other.stop();
    }
  });
});
