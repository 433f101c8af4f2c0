import { describe, expect, it } from 'vitest';
import type { Claimed, Store, StagedRow } from '../port.js';
import { INDEX_PAGE_ROWS } from '../index-pages.js';
import { RANGE_HOLD_ATTEMPTS } from '../range-hold.js';
import { PART_ROWS, RANGE_PARTS } from '../range-parts.js';
import { CHAIN_LENGTH } from '../tables.js';
import { NOW, dead, done, freshRows, outcome, retryLater, textOf, type Harness } from './support.js';

export function snapshotCases({ open, claim }: Harness): void {
  describe('snapshot', () => {
    const rowsOf = (n: number, from = 1) =>
      Array.from({ length: n }, (_, i) => ({ key: from + i, chain: `c${String(from + i).padStart(CHAIN_LENGTH - 1, '0')}`, json: `{"id":${from + i},"name":"Łucja ${from + i}"}` }));

    it('swaps a staged fresh snapshot in with its state, and reads it in key order', async () => {
      const store = await open();
      await store.snapshot.begin('students', 'fresh');
      await store.snapshot.stageFresh('students', freshRows(rowsOf(3, 5)));
      await store.snapshot.stageFresh('students', freshRows(rowsOf(4, 1)));
      expect(await store.snapshot.size('students')).toBe(0);
      const before = await store.snapshot.version('students');
      await store.snapshot.applyFresh('students', { state: { 'poll.initialDone.students': { mode: 'baseline' } } });
      expect(await store.snapshot.size('students')).toBe(7);
      expect(await store.snapshot.version('students')).toBeGreaterThan(before);
      expect((await store.snapshot.scan('students', 2, 3)).map((r) => r.key)).toEqual([3, 4, 5]);
      expect(await store.snapshot.rows('students', [6, 99])).toEqual([{ key: 6, chain: rowsOf(1, 6)[0]!.chain, body: '{"id":6,"name":"Łucja 6"}', rawHash: 'h6' }]);
      const index = await store.snapshot.index('students');
      expect([index.keys instanceof Float64Array, [...index.keys]]).toEqual([true, [1, 2, 3, 4, 5, 6, 7]]);
      expect(index.hashes).toBe('h1\nh2\nh3\nh4\nh5\nh6\nh7\n');
      expect(await store.snapshot.index('users')).toMatchObject({ keys: new Float64Array(0), hashes: '' });
      expect(await store.state.get('poll.initialDone.students')).toEqual({ mode: 'baseline' });
      expect(await store.snapshot.createdPending('students')).toBe(0);
    });

    it('leaves nothing of a discarded cycle, and refuses a fresh snapshot over rows', async () => {
      const store = await open();
      await store.snapshot.begin('users', 'fresh');
      await store.snapshot.stageFresh('users', freshRows(rowsOf(2)));
      await store.snapshot.discard('users');
      expect(await store.snapshot.size('users')).toBe(0);
      await store.snapshot.begin('users', 'fresh');
      await store.snapshot.stageFresh('users', freshRows(rowsOf(2)));
      await store.snapshot.applyFresh('users', { state: {} });
      await store.snapshot.begin('users', 'fresh');
      await store.snapshot.stageFresh('users', freshRows(rowsOf(1, 10)));
      await expect(store.snapshot.applyFresh('users', { state: {} })).rejects.toThrow();
      expect(await store.snapshot.size('users')).toBe(2);
    });

    it('keeps the chain a deleted key left, and the last one when it is deleted again', async () => {
      const store = await open();
      await store.snapshot.begin('users', 'fresh');
      await store.snapshot.stageFresh('users', freshRows(rowsOf(3)));
      await store.snapshot.applyFresh('users', { state: {} });
      expect(await store.snapshot.gone('users', [1, 2, 3])).toEqual(new Map());
      const change = (key: number, chain: string, body: string | null): StagedRow => ({ key, chain, body, rawHash: body === null ? null : `h${key}` });
      await store.snapshot.begin('users', 'changes');
      await store.snapshot.stageChanges('users', [change(2, 'gone00000002', null)]);
      await store.snapshot.applyChanges('users', { limit: 10, connectors: [], state: {}, now: NOW });
      expect(await store.snapshot.size('users')).toBe(2);
      expect(await store.snapshot.gone('users', [1, 2, 3])).toEqual(new Map([['2', 'gone00000002']]));
      expect(await store.snapshot.gone('students', [2])).toEqual(new Map());
      // Created again, then deleted again: the key's last deletion is what stays.
      await store.snapshot.begin('users', 'changes');
      await store.snapshot.stageChanges('users', [change(2, 'back00000002', '{"id":2}')]);
      await store.snapshot.applyChanges('users', { limit: 10, connectors: [], state: {}, now: NOW });
      await store.snapshot.begin('users', 'changes');
      await store.snapshot.stageChanges('users', [change(2, 'gone00000003', null), change(3, 'gone00000004', null)]);
      await store.snapshot.applyChanges('users', { limit: 10, connectors: [], state: {}, now: NOW });
      expect(await store.snapshot.gone('users', [1, 2, 3])).toEqual(new Map([['2', 'gone00000003'], ['3', 'gone00000004']]));
      expect(await store.snapshot.size('users')).toBe(1);
    });

    const fresh = async (store: Store, n: number, connectors = ['a', 'b']) => {
      await store.snapshot.begin('users', 'fresh');
      await store.snapshot.stageFresh('users', freshRows(rowsOf(n)));
      await store.snapshot.applyFresh('users', { state: {}, created: { detectedAt: 'T0', connectors, now: NOW } });
    };
    const recordIdOf = (key: number) => `users:${key}:${rowsOf(1, key)[0]!.chain}`;

    it('owes each connector a created change per fresh row, claimed from the snapshot in key order', async () => {
      const store = await open();
      await fresh(store, 5);
      expect(await store.snapshot.createdPending('users')).toBe(10);
      expect(await store.outbox.counts()).toEqual(new Map([['a', { depth: 5, dead: 0 }], ['b', { depth: 5, dead: 0 }]]));
      expect((await store.outbox.ranges()).map((r) => [r.connector, r.remaining])).toEqual([['a', 5], ['b', 5]]);
      const first = await claim(store, 'a', 2);
      expect(first.map((c) => c.delivery.recordId)).toEqual([recordIdOf(1), recordIdOf(2)]);
      expect({ ...first[1]!.created, text: textOf(first[1]!) }).toEqual({ stream: 'users', key: 2, chain: rowsOf(1, 2)[0]!.chain, detectedAt: 'T0', text: '{"id":2,"name":"Łucja 2"}' });
      // The range is in flight: nothing more of it until the batch is settled.
      expect(await claim(store, 'a', 2)).toEqual([]);
      expect(await store.outbox.settle(first.map((c) => outcome(c, done)))).toEqual(first.map((c) => c.delivery.id));
      expect((await claim(store, 'a', 10)).map((c) => c.created?.key)).toEqual([3, 4, 5]);
      expect(await store.snapshot.createdPending('users')).toBe(8);
    });

    it('owes a big stream in parts of its keys, a batch of each in flight at once, each key once', async () => {
      const store = await open();
      const n = RANGE_PARTS * PART_ROWS + 7;
      await store.snapshot.begin('users', 'fresh');
      // Staged out of key order, as a list may come.
      await store.snapshot.stageFresh('users', freshRows(rowsOf(n - 3000, 3001)));
      await store.snapshot.stageFresh('users', freshRows(rowsOf(3000, 1)));
      await store.snapshot.applyFresh('users', { state: {}, created: { detectedAt: 'T0', connectors: ['a'], now: NOW } });
      const parts = await store.outbox.ranges();
      expect(parts.map((r) => r.part)).toEqual([0, 1, 2, 3]);
      expect(parts.reduce((sum, r) => sum + r.remaining, 0)).toBe(n);
      parts.forEach((r, i) => expect(r.after).toEqual(i === 0 ? undefined : parts[i - 1]!.upto));
      expect(parts.at(-1)!.upto).toBe(n);
      const batches: Claimed[][] = [];
      for (const _ of parts) batches.push(await claim(store, 'a', 500));
      expect(batches.map((b) => b[0]!.created?.key)).toEqual(parts.map((r) => Number(r.after ?? 0) + 1));
      expect(await claim(store, 'a', 500)).toEqual([]);
      // Settled in any order, each moves its own part on.
      for (const batch of [...batches].reverse()) expect(await store.outbox.settle(batch.map((c) => outcome(c, done)))).toHaveLength(500);
      expect(await store.snapshot.createdPending('users')).toBe(n - parts.length * 500);
      const keys = batches.flat().map((c) => c.created!.key as number);
      for (let batch = await claim(store, 'a', 900); batch.length > 0; batch = await claim(store, 'a', 900)) {
        keys.push(...batch.map((c) => c.created!.key as number));
        await store.outbox.settle(batch.map((c) => outcome(c, done)));
      }
      expect(keys.sort((x, y) => x - y)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
      expect(await store.outbox.ranges()).toEqual([]);
      expect(await store.snapshot.createdPending('users')).toBe(0);
    });

    it('refuses a second settle of a range batch, and one after the lease was taken over', async () => {
      const store = await open();
      await fresh(store, 3, ['a']);
      const batch = await claim(store, 'a', 2, NOW);
      const again = await claim(store, 'a', 2, NOW + 120_000);
      expect(again.map((c) => c.created?.key)).toEqual([1, 2]);
      expect(await store.outbox.settle(batch.map((c) => outcome(c, done)))).toEqual([]);
      expect(await store.outbox.settle(again.map((c) => outcome(c, done)))).toHaveLength(2);
      expect(await store.outbox.settle(again.map((c) => outcome(c, done)))).toEqual([]);
      expect(await store.snapshot.createdPending('users')).toBe(1);
    });

    it('backs a whole range off when its batch is to be tried again, and keeps the attempts', async () => {
      const store = await open();
      await fresh(store, 3, ['a']);
      const batch = await claim(store, 'a', 2);
      await store.outbox.settle(batch.map((c) => outcome(c, (id, fence) => retryLater(id, fence, 1, NOW + 60_000))));
      expect(await claim(store, 'a', 10)).toEqual([]);
      expect(await store.outbox.nextRunAt('a')).toBe(NOW + 60_000);
      expect(await store.outbox.ranges()).toMatchObject([{ connector: 'a', remaining: 3, attempts: 1, lastError: 'x', runAt: NOW + 60_000 }]);
      const retried = await claim(store, 'a', 2, NOW + 60_000);
      expect(retried.map((c) => [c.created?.key, c.delivery.attempts])).toEqual([[1, 2], [2, 2]]);
    });

    it('lets a key whose batch keeps failing whole wait as a row of its own, and the range go on', async () => {
      const store = await open();
      await fresh(store, 3, ['a']);
      let at = NOW;
      for (let attempt = 1; attempt <= RANGE_HOLD_ATTEMPTS; attempt++) {
        const batch = await claim(store, 'a', 1, at);
        expect(batch.map((c) => [c.created?.key, c.delivery.attempts])).toEqual([[1, attempt]]);
        const runAt = at + (attempt < RANGE_HOLD_ATTEMPTS ? 1000 : 60_000);
        await store.outbox.settle(batch.map((c) => outcome(c, (id, fence) => retryLater(id, fence, attempt, runAt))));
        // Backed off whole until then: a receiver that is down gets one probe, not one per key.
        if (attempt < RANGE_HOLD_ATTEMPTS) expect(await claim(store, 'a', 1, runAt - 1)).toEqual([]);
        at = runAt;
      }
      // The key that keeps failing waits on its own, with its attempts; the range goes on at once.
      expect((await store.outbox.list()).map((d) => [d.recordId, d.status, d.attempts, d.runAt])).toEqual([[recordIdOf(1), 'pending', RANGE_HOLD_ATTEMPTS, at]]);
      const next = await claim(store, 'a', 10, at - 60_000);
      expect(next.map((c) => c.created?.key)).toEqual([2, 3]);
      await store.outbox.settle(next.map((c) => outcome(c, done)));
      expect(await store.outbox.ranges()).toEqual([]);
      expect((await claim(store, 'a', 10, at)).map((c) => c.delivery.recordId)).toEqual([recordIdOf(1)]);
    });

    it('turns what a batch did not deliver into deliveries of their own, and moves on', async () => {
      const store = await open();
      await fresh(store, 4, ['a']);
      const batch = await claim(store, 'a', 3);
      await store.outbox.settle([
        outcome(batch[0]!, done),
        outcome(batch[1]!, (id, fence) => dead(id, fence, 1)),
        outcome(batch[2]!, (id, fence) => retryLater(id, fence, 1, NOW + 60_000)),
      ]);
      expect(await store.snapshot.createdPending('users')).toBe(1);
      const rows = await store.outbox.list();
      expect(rows.map((d) => [d.recordId, d.status, d.attempts])).toEqual([[recordIdOf(2), 'dead', 1], [recordIdOf(3), 'pending', 1]]);
      expect(await store.outbox.counts()).toEqual(new Map([['a', { depth: 2, dead: 1 }]]));
      const rest = await claim(store, 'a', 10);
      expect(rest.map((c) => c.created?.key)).toEqual([4]);
      await store.outbox.settle(rest.map((c) => outcome(c, done)));
      expect(await store.outbox.ranges()).toEqual([]);
      const later = await claim(store, 'a', 10, NOW + 60_000);
      expect(later.map((c) => [c.created?.key, textOf(c)])).toEqual([[3, '{"id":3,"name":"Łucja 3"}']]);
    });

    it('reads the index of a stream of more rows than a page holds, whole and in key order', async () => {
      const store = await open();
      const n = 2 * INDEX_PAGE_ROWS + 1;
      await store.snapshot.begin('students', 'fresh');
      await store.snapshot.stageFresh('students', freshRows(rowsOf(n)));
      await store.snapshot.applyFresh('students', { state: {} });
      const index = await store.snapshot.index('students');
      expect(index.version).toBe(await store.snapshot.version('students'));
      expect(index.keys).toEqual(Float64Array.from({ length: n }, (_, i) => i + 1));
      expect(index.hashes).toBe(Array.from({ length: n }, (_, i) => `h${i + 1}\n`).join(''));
    });

    it('makes rows of what is owed before the rows change, and each keeps the text it was made from', async () => {
      const store = await open();
      await fresh(store, 5);
      await expect(store.snapshot.applyChanges('users', { limit: 10, connectors: ['a'], state: {}, now: NOW })).rejects.toThrow();
      const inFlight = await claim(store, 'b', 1);
      expect(await store.snapshot.materializeCreated('users', 2, NOW)).toBe(6);
      expect(await store.snapshot.materializeCreated('users', 10, NOW)).toBe(0);
      expect(await store.outbox.ranges()).toEqual([]);
      expect(await store.outbox.counts()).toEqual(new Map([['a', { depth: 5, dead: 0 }], ['b', { depth: 5, dead: 0 }]]));
      // The batch claimed from the range settles as the row its change is now: it is not delivered again.
      expect(await claim(store, 'b', 10)).toHaveLength(4);
      expect(await store.outbox.settle(inFlight.map((c) => outcome(c, done)))).toEqual([inFlight[0]!.delivery.id]);
      expect(await store.outbox.counts()).toEqual(new Map([['a', { depth: 5, dead: 0 }], ['b', { depth: 4, dead: 0 }]]));
      // Key 2 changes and key 3 goes before their created changes are delivered.
      await store.snapshot.begin('users', 'changes');
      const staged: StagedRow[] = [
        { key: 2, chain: 'u00000000002', body: '{"id":2,"name":"changed"}', rawHash: null, change: { id: 'users:2:u00000000002', json: '{"op":"updated"}' } },
        { key: 3, chain: 'd00000000003', body: null, rawHash: null, change: { id: 'users:3:d00000000003', json: '{"op":"deleted"}' } },
      ];
      await store.snapshot.stageChanges('users', staged);
      expect(await store.snapshot.applyChanges('users', { limit: 1, connectors: ['a'], state: { marker: 1 }, now: NOW })).toEqual({ applied: 1, done: false });
      expect(await store.state.get('marker')).toBeUndefined();
      expect(await store.snapshot.applyChanges('users', { limit: 1, connectors: ['a'], state: { marker: 1 }, now: NOW })).toEqual({ applied: 1, done: true });
      expect(await store.state.get('marker')).toBe(1);
      expect((await store.snapshot.rows('users', [2, 3])).map((r) => r.body)).toEqual(['{"id":2,"name":"changed"}']);
      expect(await store.snapshot.size('users')).toBe(4);
      // A row with no raw hash (the list worker did not hash it) is a newline alone in the index.
      expect(await store.snapshot.index('users')).toMatchObject({ keys: Float64Array.of(1, 2, 4, 5), hashes: 'h1\n\nh4\nh5\n' });
      const claimed = await claim(store, 'a', 10);
      expect(claimed.map((c) => c.delivery.recordId)).toEqual([1, 2, 3, 4, 5].map(recordIdOf));
      expect(claimed.map(textOf).slice(0, 3)).toEqual(['{"id":1,"name":"Łucja 1"}', '{"id":2,"name":"Łucja 2"}', '{"id":3,"name":"Łucja 3"}']);
      expect(claimed[1]!.created).toMatchObject({ stream: 'users', key: 2, detectedAt: 'T0' });
      await store.outbox.settle(claimed.map((c) => outcome(c, done)));
      // The update and the delete of keys 2 and 3 come after their created changes.
      expect((await claim(store, 'a', 10)).map((c) => c.json)).toEqual(['{"op":"updated"}', '{"op":"deleted"}']);
    });

    it('settles a batch in flight as the rows its changes became, each as its outcome says, and only under its lease', async () => {
      const store = await open();
      await fresh(store, 6, ['a']);
      const batch = await claim(store, 'a', 4);
      expect(batch.map((c) => c.created?.key)).toEqual([1, 2, 3, 4]);
      // Fewer keys per call than the batch holds: the whole batch becomes rows under its lease at once.
      expect(await store.snapshot.materializeCreated('users', 2, NOW)).toBe(2);
      expect(await store.snapshot.materializeCreated('users', 2, NOW)).toBe(0);
      expect((await store.outbox.list({ state: 'active' })).map((d) => d.recordId)).toEqual([1, 2, 3, 4].map(recordIdOf));
      expect((await claim(store, 'a', 10)).map((c) => c.delivery.recordId)).toEqual([5, 6].map(recordIdOf));
      const [one, two, three, four] = batch;
      expect(await store.outbox.settle([
        outcome(one!, done), outcome(two!, (id, fence) => retryLater(id, fence, 1)), outcome(three!, (id, fence) => dead(id, fence, 1)),
      ]).then((ids) => ids.sort())).toEqual([one, two, three].map((c) => c!.delivery.id).sort());
      const rows = await store.outbox.list({ connector: 'a' });
      expect(rows.filter((d) => [2, 3].map(recordIdOf).includes(d.recordId)).map((d) => [d.recordId, d.status, d.attempts]))
        .toEqual([[recordIdOf(2), 'pending', 1], [recordIdOf(3), 'dead', 1]]);
      // Key 4's lease runs out unsettled (as do 5's and 6's): its row is claimed again, with its text,
      // and the old settlement is refused; key 2 is due again.
      const later = await claim(store, 'a', 10, NOW + 120_000);
      expect(later.map((c) => [c.delivery.recordId, textOf(c)])).toEqual([4, 5, 6, 2].map((key) => [recordIdOf(key), `{"id":${key},"name":"Łucja ${key}"}`]));
      expect(await store.outbox.settle([outcome(four!, done)])).toEqual([]);
      expect(await store.outbox.settle(later.map((c) => outcome(c, done))).then((ids) => ids.sort())).toEqual(later.map((c) => c.delivery.id).sort());
      expect(await store.outbox.counts()).toEqual(new Map([['a', { depth: 0, dead: 1 }]]));
    });

    it('puts a created change behind a delivery its key had queued before the snapshot was fresh', async () => {
      const store = await open();
      await store.outbox.enqueue([{ id: 'users:2:old', stream: 'users', orderKey: 'users:2', json: '{"op":"old"}', connectors: ['a'] }]);
      await fresh(store, 3, ['a']);
      const first = await claim(store, 'a', 10);
      expect(first.map((c) => c.json ?? c.created?.key)).toEqual(['{"op":"old"}', 1, 3]);
      await store.outbox.settle(first.map((c) => outcome(c, done)));
      expect((await claim(store, 'a', 10)).map((c) => c.created?.key)).toEqual([2]);
    });

    it('puts a created change behind a dead delivery of its key, and one waiting behind another', async () => {
      const store = await open();
      const change = (id: string, key: number) => ({ id, stream: 'users' as const, orderKey: `users:${key}`, json: `{"op":"${id}"}`, connectors: ['a'] });
      await store.outbox.enqueue([change('users:2:gone', 2), change('users:3:first', 3), change('users:3:second', 3)]);
      const [gone] = await claim(store, 'a', 1);
      await store.outbox.settle([outcome(gone!, (id, fence) => dead(id, fence, 1))]);
      await fresh(store, 4, ['a']);
      // Key 2 is held by its dead delivery; key 3's second change waits behind its first.
      const first = await claim(store, 'a', 10);
      expect(first.map((c) => c.json ?? c.created?.key)).toEqual(['{"op":"users:3:first"}', 1, 4]);
      await store.outbox.settle(first.map((c) => outcome(c, done)));
      const second = await claim(store, 'a', 10);
      expect(second.map((c) => c.json)).toEqual(['{"op":"users:3:second"}']);
      await store.outbox.settle(second.map((c) => outcome(c, done)));
      expect(await store.outbox.retry({ id: 'a:users:2:gone' }, NOW)).toEqual(['a:users:2:gone']);
      const again = await claim(store, 'a', 10);
      expect(again.map((c) => c.json ?? c.created?.key)).toEqual(['{"op":"users:2:gone"}', 3]);
      await store.outbox.settle(again.map((c) => outcome(c, done)));
      expect((await claim(store, 'a', 10)).map((c) => c.created?.key)).toEqual([2]);
    });
  });

}
