import fc from 'fast-check';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Op } from '../store/index.js';
import { createStore, type Store } from '../store/index.js';
import { backlogKey, createBacklog, pendingKeys, type Backlog, type BacklogMarker } from './backlog.js';
import { createdChangeOf } from './created-change.js';
import { newChain } from './diff.js';
import { encodeEntry, putEntryOp, snapshotCollection, STATE_COLLECTION } from './snapshot.js';
import { memoryOutbox, testStudent, type MemoryOutbox } from './testing.js';

const log = pino({ level: 'silent' });
const DETECTED = '2026-11-25T10:00:00.000Z';

let store: Store;
let outbox: MemoryOutbox;
let backlog: Backlog | undefined;

/** The store as a first `emit` cycle leaves it: entries for `ids` and the backlog's marker. */
async function firstCycleOf(ids: number[], marker: BacklogMarker = { detectedAt: DETECTED }): Promise<void> {
  const ops: Op[] = ids.map((id) => {
    const json = JSON.stringify(testStudent(id));
    return putEntryOp('students', String(id), encodeEntry(newChain('emit', String(id), json), json));
  });
  await store.commit([{ op: 'put', c: STATE_COLLECTION, k: backlogKey('students'), v: marker }, ...ops]);
}

const keysOf = () => outbox.records().map((r) => (r as { key: number }).key);
const ascending = (n: number, from = 1) => Array.from({ length: n }, (_, i) => i + from);

beforeEach(async () => {
  store = createStore({ log });
  await store.start();
  outbox = memoryOutbox(store);
});

afterEach(async () => {
  await backlog?.stop();
  backlog = undefined;
  await store.stop();
});

describe('pendingKeys', () => {
  it('gives the keys after `after`, ascending by number, whatever their order', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: -1e6, max: Number.MAX_SAFE_INTEGER })), fc.option(fc.integer(), { nil: undefined }), (ids, after) => {
        const got = [...pendingKeys(ids.map(String), after)];
        expect(got).toEqual(ids.filter((id) => after === undefined || id > after).sort((a, b) => a - b));
        expect(got.map(String).every((key) => ids.map(String).includes(key))).toBe(true);
      }),
    );
  });
});

describe('backlog', () => {
  it('enqueues the created change of every entry, ascending, as the cycle would have, and deletes its marker', async () => {
    const ids = [12, 3, 100, 7, 25, 1, 64];
    await firstCycleOf(ids);
    backlog = createBacklog({ store, outbox, log, chunkSize: 3 });
    await backlog.finish();
    expect(keysOf()).toEqual([...ids].sort((a, b) => a - b));
    for (const record of outbox.records()) {
      const key = String((record as { key: number }).key);
      const expected = createdChangeOf('students', key, store.get<string>(snapshotCollection('students'), key)!, DETECTED);
      expect(JSON.stringify(record)).toBe(JSON.stringify(expected));
      expect(record.id).toBe(`students:${key}:${newChain('emit', key, JSON.stringify(testStudent(Number(key))))}`);
    }
    expect(store.has(STATE_COLLECTION, backlogKey('students'))).toBe(false);
    expect(backlog.remaining('students')).toBe(0);
  });

  it("writes each chunk's progress in the same commit as its entries, so a crash resumes where it stopped", async () => {
    await firstCycleOf(ascending(10));
    const commits: Op[][] = [];
    const real = store.commit.bind(store);
    vi.spyOn(store, 'commit').mockImplementation((ops) => {
      commits.push(ops);
      return real(ops);
    });
    backlog = createBacklog({ store, outbox, log, chunkSize: 4 });
    await backlog.finish('students');
    expect(commits).toHaveLength(3);
    for (const ops of commits) {
      const progress = ops.filter((op) => op.c === STATE_COLLECTION);
      expect(progress).toHaveLength(1);
      const lastKey = Math.max(...ops.filter((op) => op.c === 'test.outbox').map((op) => ((op as { v: { record: { key: number } } }).v.record.key)));
      if (ops === commits.at(-1)) expect(progress[0]).toMatchObject({ op: 'del', k: backlogKey('students') });
      else expect(progress[0]).toMatchObject({ op: 'put', v: { detectedAt: DETECTED, after: lastKey } });
    }
  });

  it('start() resumes a marker left in the store by itself, and whenDone() resolves once it is done', async () => {
    await firstCycleOf(ascending(7), { detectedAt: DETECTED, after: 2 });
    backlog = createBacklog({ store, outbox, log, chunkSize: 2 });
    backlog.start();
    await vi.waitFor(() => expect(store.has(STATE_COLLECTION, backlogKey('students'))).toBe(false));
    expect(keysOf()).toEqual([3, 4, 5, 6, 7]);
    await backlog.whenDone();
  });

  it('resumes after `after` and skips ids the outbox already holds', async () => {
    await firstCycleOf(ascending(10), { detectedAt: DETECTED, after: 6 });
    backlog = createBacklog({ store, outbox, log, chunkSize: 2 });
    backlog.start();
    await backlog.finish();
    expect(keysOf()).toEqual([7, 8, 9, 10]);
    // The marker again, from the start: the outbox skips the ids it holds, nothing doubles.
    await store.commit([{ op: 'put', c: STATE_COLLECTION, k: backlogKey('students'), v: { detectedAt: DETECTED } }]);
    await backlog.finish();
    expect(keysOf()).toEqual([7, 8, 9, 10, 1, 2, 3, 4, 5, 6]);
  });

  it('stopped between two chunks, a new backlog on the same store finishes the rest exactly once', async () => {
    await firstCycleOf(ascending(20));
    backlog = createBacklog({ store, outbox, log, chunkSize: 5 });
    let commits = 0;
    const real = store.commit.bind(store);
    const stopping: Promise<void>[] = [];
    vi.spyOn(store, 'commit').mockImplementation(async (ops) => {
      await real(ops);
      if ((commits += 1) === 2) stopping.push(backlog!.stop());
    });
    backlog.kick();
    await vi.waitFor(() => expect(stopping).toHaveLength(1));
    await Promise.all(stopping);
    expect(keysOf()).toEqual(ascending(10));
    expect(store.get(STATE_COLLECTION, backlogKey('students'))).toEqual({ detectedAt: DETECTED, after: 10 });
    backlog = createBacklog({ store, outbox, log, chunkSize: 5 });
    backlog.start();
    await backlog.finish();
    expect(keysOf()).toEqual(ascending(20));
  });

  it('paces itself on the queue: waits while the outbox holds highWater deliveries, goes on as they leave; finish() does not wait', async () => {
    await firstCycleOf(ascending(30));
    let depth = 0;
    const listeners: (() => void)[] = [];
    outbox.depth = () => depth;
    outbox.on = (_event, listener) => (listeners.push(listener), () => {});
    const enqueueOps = outbox.enqueueOps.bind(outbox);
    outbox.enqueueOps = (records) => {
      depth += records.length;
      return enqueueOps(records);
    };
    backlog = createBacklog({ store, outbox, log, chunkSize: 5, highWater: 10 });
    backlog.kick();
    await vi.waitFor(() => expect(keysOf()).toHaveLength(10));
    await new Promise((resolve) => setTimeout(resolve, 20)); // nothing to await: it must stay put
    expect(keysOf()).toHaveLength(10);
    expect(backlog.remaining('students')).toBe(20);
    // A delivery that leaves the queue at 6 (not below half of 10) does not wake it; at 4 it does.
    depth = 6;
    for (const listener of listeners) listener();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(keysOf()).toHaveLength(10);
    depth = 4;
    for (const listener of listeners) listener();
    await vi.waitFor(() => expect(keysOf()).toHaveLength(20)); // two chunks: 4 → 9 → 14, then it waits again
    await backlog.finish('students');
    expect(keysOf()).toEqual(ascending(30));
  });

  it('a failed write rejects finish, keeps the marker, and a later finish completes', async () => {
    await firstCycleOf(ascending(6));
    backlog = createBacklog({ store, outbox, log, chunkSize: 2 });
    const real = store.commit.bind(store);
    let calls = 0;
    const spy = vi.spyOn(store, 'commit').mockImplementation((ops) => ((calls += 1) === 2 ? Promise.reject(new Error('disk full (injected)')) : real(ops)));
    await expect(backlog.finish()).rejects.toThrow('disk full');
    spy.mockRestore();
    expect(store.get(STATE_COLLECTION, backlogKey('students'))).toEqual({ detectedAt: DETECTED, after: 2 });
    await backlog.finish();
    expect(keysOf()).toEqual(ascending(6));
  });
});
