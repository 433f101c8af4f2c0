import { afterEach, describe, expect, it, vi } from 'vitest';
import { testStore, type TestStore } from '../../test/support/stores.js';
import type { StagedRow } from '../store/index.js';
import { diffRecords, type PolledRecord } from './diff.js';
import type { ParseBatch } from '../upstream/list/index.js';
import { encodeEntry } from './snapshot.js';
import { createStreamScan } from './stream-scan.js';
import { testUser } from '../../test/support/poll.js';
import { createYielder } from '../yielder.js';

const made: TestStore[] = [];
afterEach(async () => {
  for (const m of made.splice(0)) await m.cleanup();
});

const ctx = { stream: 'users' as const, detectedAt: '2026-11-22T10:00:00.000Z', initial: undefined };
const batchOf = (records: PolledRecord[]): ParseBatch => ({
  known: 0, keys: records.map((r) => r.id as number), texts: records.map((r) => JSON.stringify(r)), hashes: records.map((r) => `h${r.id}:${JSON.stringify(r).length}`),
});

describe('stream scan', () => {
  it('stages what the diff of the whole list gives, row by row, with the changes\' records', async () => {
    const m = await testStore('sqlite');
    made.push(m);
    const { store } = m;
    // A stored snapshot of users 1-5.
    const before = [1, 2, 3, 4, 5].map((id) => testUser(id));
    await store.snapshot.begin('users', 'changes');
    await store.snapshot.stageChanges('users', before.map((u) => ({ key: u.id, chain: 'c0000000000' + u.id, body: JSON.stringify(u), rawHash: `h${u.id}:${JSON.stringify(u).length}` })));
    await store.snapshot.applyChanges('users', { limit: 100, connectors: [], state: {}, now: 0 });

    const now = [testUser(1), testUser(2, 'Zmiana'), testUser(4), testUser(6)];
    const staged: StagedRow[] = [];
    const scan = createStreamScan({
      ctx, mode: 'stage', yielder: createYielder(), signal: new AbortController().signal,
      snapshot: { ...store.snapshot, stageChanges: async (_s, rows) => void staged.push(...rows), stageFresh: store.snapshot.stageFresh, rows: store.snapshot.rows },
    });
    await scan.batch(batchOf(now));
    await scan.flush();
    await scan.deletions([3, 5]);
    const stored = new Map(before.map((u) => [String(u.id), encodeEntry('c0000000000' + u.id, JSON.stringify(u))]));
    const items = diffRecords(ctx, { get: (k) => stored.get(k), keys: () => stored.keys(), size: stored.size }, now);
    expect(staged.map((r) => [r.key, r.change?.id])).toEqual(items.map((i) => [Number(i.key), i.change?.id]));
    expect(staged.map((r) => (r.body === null ? null : r.chain + r.body))).toEqual(items.map((i) => i.stored));
    expect(staged.filter((r) => r.change).map((r) => JSON.parse(r.change!.json))).toEqual(items.flatMap((i) => (i.change ? [i.change] : [])));
    expect(scan.counts).toEqual({ created: 1, updated: 1, deleted: 2, baselined: 0 });
    expect(scan.fetched).toBe(4);
  });

  it('remembers new bytes of an unchanged record without reporting a change', async () => {
    const m = await testStore('sqlite');
    made.push(m);
    const { store } = m;
    await store.snapshot.begin('users', 'changes');
    await store.snapshot.stageChanges('users', [{ key: 1, chain: 'c00000000001', body: JSON.stringify(testUser(1)), rawHash: 'old' }]);
    await store.snapshot.applyChanges('users', { limit: 100, connectors: [], state: {}, now: 0 });
    const staged: StagedRow[] = [];
    const scan = createStreamScan({
      ctx, mode: 'stage', yielder: createYielder(), signal: new AbortController().signal,
      snapshot: { ...store.snapshot, stageChanges: async (_s, rows) => void staged.push(...rows) },
    });
    await scan.batch({ ...batchOf([testUser(1)]), hashes: ['new'] });
    await scan.flush();
    expect(staged).toEqual([{ key: 1, chain: 'c00000000001', body: JSON.stringify(testUser(1)), rawHash: 'new' }]);
    expect(scan.counts).toEqual({ created: 0, updated: 0, deleted: 0, baselined: 0 });
  });

  it('asks the store once for many small batches, not once per batch', async () => {
    const m = await testStore('sqlite');
    made.push(m);
    const { store } = m;
    const rows = vi.spyOn(store.snapshot, 'rows');
    const staged: StagedRow[] = [];
    const scan = createStreamScan({
      ctx, mode: 'stage', yielder: createYielder(), signal: new AbortController().signal,
      snapshot: { ...store.snapshot, rows: store.snapshot.rows, stageChanges: async (_s, r) => void staged.push(...r) },
    });
    for (const id of [4, 9, 2]) expect(scan.batch(batchOf([testUser(id)]))).toBeUndefined();
    expect(rows).not.toHaveBeenCalled();
    await scan.flush();
    expect(rows).toHaveBeenCalledTimes(1);
    expect(staged.map((r) => r.key)).toEqual([4, 9, 2]);
    expect(scan.counts.created).toBe(3);
  });
});
