import { afterEach, describe, expect, it } from 'vitest';
import type { Claimed, Enqueue, InboxEntry, Settlement, Store, StagedRow } from './port.js';
import { CHAIN_LENGTH } from './tables.js';

/**
 * The store's promises as one suite, run against every engine (sqlite.test.ts, postgres.test.ts):
 * the same cases, the same expected results. `open` makes a store on fresh, empty storage; `second`
 * opens another replica on the same storage where the engine allows several (PostgreSQL).
 */
export interface StoreFactory {
  open(): Promise<Store>;
  second?(): Promise<Store>;
}

/** Later than any real clock reading: whatever the store enqueued at its own `now` is due by then. */
const NOW = Date.parse('2100-01-01T00:00:00Z');

export function event(id: string, extra: Partial<InboxEntry> = {}): InboxEntry {
  return { id, event: 'invoice.created', receivedAt: new Date(NOW).toISOString(), receivedAtMs: NOW, body: `{"event":"invoice.created","object":{"id":"${id}"}}`, recordIds: [`events:${id}`], reprocessed: 0, ...extra };
}

export function record(id: string, orderKey: string, connectors: readonly string[] = ['a'], json = `{"id":"${id}"}`): Enqueue {
  return { id, stream: 'invoices', orderKey, json, connectors };
}

const done = (id: string, fence: number, connector = 'a'): Settlement => ({ id, fence, connector, status: 'done', at: NOW });
const retryLater = (id: string, fence: number, attempts: number, runAt = NOW + 60_000, connector = 'a'): Settlement =>
  ({ id, fence, connector, status: 'pending', at: NOW, runAt, attempts, lastError: 'x' });
const dead = (id: string, fence: number, attempts: number, connector = 'a'): Settlement =>
  ({ id, fence, connector, status: 'dead', at: NOW, runAt: NOW, attempts, lastError: 'rejected' });
/** The settlement of a claimed delivery, as the outbox worker makes it (a range item keeps its place in the range). */
const outcome = (c: Claimed, settlement: (id: string, fence: number) => Settlement): Settlement =>
  ({ ...settlement(c.delivery.id, c.delivery.fence), connector: c.delivery.connector, ...(c.delivery.range ? { range: c.delivery.range } : {}) });

/** A claimed record's JSON as text: its own, or its snapshot row's (which an engine may give as bytes). */
export function textOf(claimed: Claimed): string | undefined {
  const text = claimed.created?.text ?? claimed.json;
  return text === undefined || typeof text === 'string' ? text : Buffer.from(text).toString('utf8');
}

/** The UTF-8 bytes of fresh rows as the list worker makes them: chain, then JSON, per row. */
export function freshRows(rows: { key: number; chain: string; json: string; hash?: string }[]) {
  const parts = rows.map((r) => Buffer.from(r.chain + r.json));
  const ends: number[] = [];
  let end = 0;
  for (const part of parts) ends.push((end += part.length));
  const bytes = Buffer.concat(parts);
  return { keys: rows.map((r) => r.key), hashes: rows.map((r) => r.hash ?? `h${r.key}`), bytes: new Uint8Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length)), ends };
}

export function describeStoreConformance(engine: string, factory: StoreFactory): void {
  describe(`store conformance: ${engine}`, () => {
    const opened: Store[] = [];
    afterEach(async () => {
      for (const store of opened.splice(0).reverse()) await store.stop();
    });
    const open = async (which: 'open' | 'second' = 'open') => {
      const store = await factory[which]!();
      await store.start();
      opened.push(store);
      return store;
    };
    const claim = (store: Store, connector = 'a', limit = 10, now = NOW) => store.outbox.claim({ connector, limit, now, leaseMs: 60_000 });

    describe('inbox', () => {
      it('stores an event with its records in one transaction, and a second delivery is a duplicate', async () => {
        const store = await open();
        expect(await store.inbox.accept(event('e1'), [record('events:e1', 'events:1', ['a', 'b'])])).toBe('stored');
        expect(await store.inbox.accept(event('e1'), [record('events:e1', 'events:1', ['a', 'b'])])).toBe('duplicate');
        expect((await store.inbox.get('e1'))?.recordIds).toEqual(['events:e1']);
        expect((await store.outbox.list()).map((d) => d.id)).toEqual(['a:events:e1', 'b:events:e1']);
      });

      it('writes nothing of a transaction that fails part-way', async () => {
        const store = await open();
        const broken = { ...record('events:e2', 'events:2'), json: null as unknown as string };
        await expect(store.inbox.accept(event('e2'), [broken])).rejects.toMatchObject({ code: 'store.failed' });
        expect(await store.inbox.get('e2')).toBeUndefined();
        expect(await store.outbox.list()).toEqual([]);
        expect(await store.inbox.accept(event('e2'), [record('events:e2', 'events:2')])).toBe('stored');
      });

      it('fails a call made together with others alone: the others commit, a claim among them keeps what it claimed', async () => {
        const store = await open();
        await store.outbox.enqueue([record('t1', 'k:t1')]);
        const broken = { ...record('events:t3', 'events:t3'), json: null as unknown as string };
        // Made in one turn: an engine that commits calls together has them in one transaction.
        const [first, claimed, failed, last] = await Promise.allSettled([
          store.inbox.accept(event('t2'), [record('events:t2', 'events:t2')]),
          claim(store),
          store.inbox.accept(event('t3'), [broken]),
          store.inbox.accept(event('t4'), [record('events:t4', 'events:t4')]),
        ]);
        expect(first).toMatchObject({ status: 'fulfilled', value: 'stored' });
        expect(last).toMatchObject({ status: 'fulfilled', value: 'stored' });
        expect(failed).toMatchObject({ status: 'rejected', reason: { code: 'store.failed' } });
        expect(await store.inbox.get('t3')).toBeUndefined();
        // The claim's transaction was run again: it holds the delivery under the fence it returned.
        const taken = claimed.status === 'fulfilled' ? claimed.value.filter((c) => c.delivery.id === 'a:t1') : [];
        expect(taken).toHaveLength(1);
        expect(await store.outbox.settle([done('a:t1', taken[0]!.delivery.fence)])).toEqual(['a:t1']);
        expect((await store.outbox.list()).map((d) => d.id).sort()).toEqual(['a:events:t2', 'a:events:t4']);
      });

      it('stores one of many concurrent deliveries of the same event', async () => {
        const store = await open();
        const answers = await Promise.all(Array.from({ length: 20 }, () => store.inbox.accept(event('e3'), [record('events:e3', 'events:3')])));
        expect(answers.filter((a) => a === 'stored')).toHaveLength(1);
        expect(await store.outbox.list()).toHaveLength(1);
      });

      it('quarantines a stale delivery once, not when its event is stored, and releases it', async () => {
        const store = await open();
        const held = { id: 'q1', event: 'invoice.created', reason: 'stale' as const, timestamp: 1, receivedAt: 'x', body: '{}' };
        expect(await store.inbox.quarantine(held)).toBe(true);
        expect(await store.inbox.quarantine(held)).toBe(false);
        await store.inbox.accept(event('stored1'), []);
        expect(await store.inbox.quarantine({ ...held, id: 'stored1' })).toBe(false);
        expect((await store.inbox.quarantined()).map((q) => q.id)).toEqual(['q1']);
        expect(await store.inbox.release('q1', event('q1'), [record('events:q1', 'events:q1')])).toBe('released');
        expect(await store.inbox.release('q1', event('q1'), [])).toBe('missing');
        await store.inbox.quarantine({ ...held, id: 'q2' });
        await store.inbox.accept(event('q2'), []);
        expect(await store.inbox.quarantined()).toEqual([]); // a fresh delivery supersedes the held one
        await store.inbox.quarantine({ ...held, id: 'q3' });
        await store.inbox.accept(event('q3x', { id: 'q3x' }), []);
        expect(await store.inbox.release('q3', event('q3x'), [])).toBe('duplicate');
      });

      it('re-emits only from the reprocess count it read, and prunes old events', async () => {
        const store = await open();
        await store.inbox.accept(event('r1'), []);
        expect(await store.inbox.reprocess('r1', 0, ['events:r1', 'events:r1:r1'], [record('events:r1:r1', 'events:r1')])).toBe(true);
        expect(await store.inbox.reprocess('r1', 0, ['x'], [])).toBe(false);
        expect((await store.inbox.get('r1'))?.reprocessed).toBe(1);
        await store.inbox.accept(event('old', { receivedAtMs: NOW - 1000 }), []);
        expect(await store.inbox.prune(NOW - 1)).toBe(1);
        expect(await store.inbox.get('old')).toBeUndefined();
        expect(await store.inbox.get('r1')).toBeDefined();
      });
    });

    describe('outbox', () => {
      it('skips records already queued, keeps state with them, and forgets a delivery once done', async () => {
        const store = await open();
        expect(await store.outbox.enqueue([record('r1', 'k:1', ['a', 'b'])], { 'roster.lastExport': { id: 'r1' } })).toBe(2);
        expect(await store.outbox.enqueue([record('r1', 'k:1', ['a', 'b'])])).toBe(0);
        expect(await store.state.get('roster.lastExport')).toEqual({ id: 'r1' });
        const [claimed] = await claim(store);
        expect(claimed?.json).toBe('{"id":"r1"}');
        expect(await store.outbox.settle([done('a:r1', claimed!.delivery.fence)])).toEqual(['a:r1']);
        expect(await store.outbox.get('a:r1')).toBeUndefined();
        // The record stays while another connector still has it to deliver.
        const [other] = await claim(store, 'b');
        expect(other?.json).toBe('{"id":"r1"}');
        await store.outbox.settle([done('b:r1', other!.delivery.fence)]);
        expect(await store.outbox.list()).toEqual([]);
      });

      it('delivers a key in order: the next waits until the one before is done', async () => {
        const store = await open();
        await store.outbox.enqueue([record('k1-a', 'k:1'), record('k1-b', 'k:1'), record('k2-a', 'k:2')]);
        const first = await claim(store);
        expect(first.map((c) => c.delivery.recordId)).toEqual(['k1-a', 'k2-a']);
        expect(await claim(store)).toEqual([]);
        const listed = await store.outbox.list({ state: 'pending' });
        expect(listed.find((d) => d.recordId === 'k1-b')).toMatchObject({ status: 'pending', waitingFor: 'a:k1-a' });
        await store.outbox.settle([done('a:k1-a', first[0]!.delivery.fence)]);
        expect((await claim(store)).map((c) => c.delivery.recordId)).toEqual(['k1-b']);
      });

      it('keeps sequence order under concurrent producers of one key', async () => {
        const store = await open();
        await Promise.all(Array.from({ length: 31 }, (_, i) => store.outbox.enqueue([record(`seq-${i}`, 'k:seq')])));
        const order: string[] = [];
        const seqs: number[] = [];
        for (;;) {
          const [next] = await claim(store);
          if (!next) break;
          order.push(next.delivery.recordId);
          seqs.push(next.delivery.seq);
          await store.outbox.settle([done(next.delivery.id, next.delivery.fence)]);
        }
        expect(order).toHaveLength(31);
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      });

      it('lets a dead delivery hold back only its own key, and a retry by hand release it', async () => {
        const store = await open();
        await store.outbox.enqueue([record('d1', 'k:d'), record('d2', 'k:d'), record('o1', 'k:o')]);
        const [d1, o1] = await claim(store);
        await store.outbox.settle([dead(d1!.delivery.id, d1!.delivery.fence, 1), retryLater(o1!.delivery.id, o1!.delivery.fence, 1)]);
        expect(await claim(store)).toEqual([]);
        expect((await claim(store, 'a', 10, NOW + 60_000)).map((c) => c.delivery.recordId)).toEqual(['o1']);
        expect((await store.outbox.counts()).get('a')).toEqual({ depth: 2, dead: 1 });
        expect(await store.outbox.retry({ allDead: true }, NOW + 1)).toEqual(['a:d1']);
        const [again] = await claim(store, 'a', 10, NOW + 1);
        expect(again?.delivery).toMatchObject({ recordId: 'd1', attempts: 1 });
        await store.outbox.settle([done(again!.delivery.id, again!.delivery.fence)]);
        expect((await claim(store, 'a', 10, NOW + 1)).map((c) => c.delivery.recordId)).toEqual(['d2']);
      });

      it('orders claims by due time, and says when the next one is due', async () => {
        const store = await open();
        await store.outbox.enqueue([record('t1', 'k:t1'), record('t2', 'k:t2')]);
        const both = await claim(store);
        await store.outbox.settle([retryLater('a:t1', both[0]!.delivery.fence, 1)]);
        await store.outbox.settle([retryLater('a:t2', both[1]!.delivery.fence, 1, NOW + 30_000)]);
        expect(await store.outbox.nextRunAt('a')).toBe(NOW + 30_000);
        expect((await claim(store, 'a', 10, NOW + 60_000)).map((c) => c.delivery.recordId)).toEqual(['t2', 't1']);
      });

      it('refuses a settle under a fence that is not the current one, and returns expired leases', async () => {
        const store = await open();
        await store.outbox.enqueue([record('l1', 'k:l')]);
        const [first] = await claim(store);
        expect(await store.outbox.sweep(NOW + 60_001)).toEqual({ reclaimed: 1 });
        const [second] = await claim(store, 'a', 10, NOW + 60_001);
        expect(second!.delivery.fence).toBeGreaterThan(first!.delivery.fence);
        expect(await store.outbox.settle([done('a:l1', first!.delivery.fence)])).toEqual([]);
        expect(await store.outbox.settle([done('a:l1', second!.delivery.fence)])).toEqual(['a:l1']);
      });

      it('returns a stopped replica\'s leases when its heartbeat is gone', async () => {
        const store = await open();
        await store.outbox.enqueue([record('h1', 'k:h')]);
        await claim(store);
        await store.replicas.beat(NOW);
        expect(await store.outbox.sweep(NOW + 1000)).toEqual({ reclaimed: 0 });
        expect(await store.outbox.sweep(NOW + 40_000)).toEqual({ reclaimed: 1 });
        expect((await store.replicas.live(NOW - 1)).map((r) => r.id)).toEqual([store.replicaId]);
      });
    });

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
        expect(await store.snapshot.index('students')).toMatchObject({ keys: [1, 2, 3, 4, 5, 6, 7], hashes: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'h7'] });
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

      it('makes rows of what is owed before the rows change, and each keeps the text it was made from', async () => {
        const store = await open();
        await fresh(store, 5);
        await expect(store.snapshot.applyChanges('users', { limit: 10, connectors: ['a'], state: {}, now: NOW })).rejects.toThrow();
        const inFlight = await claim(store, 'b', 1);
        expect(await store.snapshot.materializeCreated('users', 2, NOW)).toBe(6);
        expect(await store.snapshot.materializeCreated('users', 10, NOW)).toBe(0);
        expect(await store.outbox.ranges()).toEqual([]);
        expect(await store.outbox.counts()).toEqual(new Map([['a', { depth: 5, dead: 0 }], ['b', { depth: 5, dead: 0 }]]));
        // The batch claimed from the range is refused: its change is a row now, delivered again as one.
        expect(await store.outbox.settle(inFlight.map((c) => outcome(c, done)))).toEqual([]);
        // Key 2 changes and key 3 goes before their created changes are delivered.
        await store.snapshot.begin('users', 'changes');
        const staged: StagedRow[] = [
          { key: 2, chain: 'u00000000002', body: '{"id":2,"name":"changed"}', rawHash: 'x', change: { id: 'users:2:u00000000002', json: '{"op":"updated"}' } },
          { key: 3, chain: 'd00000000003', body: null, rawHash: null, change: { id: 'users:3:d00000000003', json: '{"op":"deleted"}' } },
        ];
        await store.snapshot.stageChanges('users', staged);
        expect(await store.snapshot.applyChanges('users', { limit: 1, connectors: ['a'], state: { marker: 1 }, now: NOW })).toEqual({ applied: 1, done: false });
        expect(await store.state.get('marker')).toBeUndefined();
        expect(await store.snapshot.applyChanges('users', { limit: 1, connectors: ['a'], state: { marker: 1 }, now: NOW })).toEqual({ applied: 1, done: true });
        expect(await store.state.get('marker')).toBe(1);
        expect((await store.snapshot.rows('users', [2, 3])).map((r) => r.body)).toEqual(['{"id":2,"name":"changed"}']);
        expect(await store.snapshot.size('users')).toBe(4);
        const claimed = await claim(store, 'a', 10);
        expect(claimed.map((c) => c.delivery.recordId)).toEqual([1, 2, 3, 4, 5].map(recordIdOf));
        expect(claimed.map(textOf).slice(0, 3)).toEqual(['{"id":1,"name":"Łucja 1"}', '{"id":2,"name":"Łucja 2"}', '{"id":3,"name":"Łucja 3"}']);
        expect(claimed[1]!.created).toMatchObject({ stream: 'users', key: 2, detectedAt: 'T0' });
        await store.outbox.settle(claimed.map((c) => outcome(c, done)));
        // The update and the delete of keys 2 and 3 come after their created changes.
        expect((await claim(store, 'a', 10)).map((c) => c.json)).toEqual(['{"op":"updated"}', '{"op":"deleted"}']);
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
    });

    describe('state and replicas', () => {
      it('puts, reads and deletes state values', async () => {
        const store = await open();
        await store.state.put({ a: { n: 1 }, b: 'text' });
        await store.state.put({ a: null });
        expect(await store.state.get('a')).toBeUndefined();
        expect(await store.state.get('b')).toBe('text');
      });

      it('gives a role to the replica that asks, keeps it there, and hands it on once given up', async () => {
        const store = await open();
        // Real time: a role counts while its holder's heartbeat is recent.
        const now = Date.now();
        const fence = await store.roles.acquire('connector:a', now);
        expect(fence).toBeGreaterThan(0);
        expect(await store.roles.acquire('connector:a', now + 1000)).toBe(fence);
        expect((await store.roles.holdings(now)).roles).toEqual([{ role: 'connector:a', holder: store.replicaId, since: now, fence }]);
        await store.roles.release('connector:a');
        expect((await store.roles.holdings(now)).roles).toEqual([]);
        expect(await store.roles.acquire('connector:a', now)).toBeGreaterThan(fence!);
      });

      it('claims each tick of a job once, and never one that is not after the last', async () => {
        const store = await open();
        expect(await store.roles.claimTick('poll', 60_000, NOW)).toBe(true);
        expect(await store.roles.claimTick('poll', 60_000, NOW)).toBe(false);
        expect(await store.roles.claimTick('poll', 0, NOW)).toBe(false);
        expect(await store.roles.claimTick('export', 60_000, NOW)).toBe(true);
        expect(await store.roles.claimTick('poll', 120_000, NOW)).toBe(true);
        const { ticks } = await store.roles.holdings(NOW);
        expect(ticks.map((t) => [t.job, t.slot, t.replica])).toEqual([['export', 60_000, store.replicaId], ['poll', 120_000, store.replicaId]]);
      });
    });

    if (factory.second) {
      describe('replicas on one database', () => {
        it('never hands one delivery to two replicas, and refuses a settle by the one that lost it', async () => {
          const one = await open();
          const two = await open('second');
          await one.outbox.enqueue(Array.from({ length: 40 }, (_, i) => record(`m${i}`, `k:m${i}`)));
          const [a, b] = await Promise.all([claim(one, 'a', 25), claim(two, 'a', 25)]);
          const ids = [...a, ...b].map((c) => c.delivery.id);
          expect(new Set(ids).size).toBe(40);
          expect(await two.outbox.settle([done(a[0]!.delivery.id, a[0]!.delivery.fence)])).toEqual([]);
          expect(await one.outbox.settle([done(a[0]!.delivery.id, a[0]!.delivery.fence)])).toEqual([a[0]!.delivery.id]);
        });

        it('stores an event once when replicas take its deliveries at the same moment', async () => {
          const one = await open();
          const two = await open('second');
          const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? one : two).inbox.accept(event('race'), [record('events:race', 'events:race')])));
          expect(answers.filter((a) => a === 'stored')).toHaveLength(1);
          expect((await one.outbox.list()).map((d) => d.id)).toEqual(['a:events:race']);
        });

        it('lets one replica hold a role at a time, until it gives it up or stops', async () => {
          const one = await open();
          const two = await open('second');
          const now = Date.now();
          const [a, b] = await Promise.all([one.roles.acquire('connector:files', now), two.roles.acquire('connector:files', now)]);
          expect([a, b].filter((f) => f !== undefined)).toHaveLength(1);
          const [holder, other] = a === undefined ? [two, one] : [one, two];
          const fence = (a ?? b)!;
          expect(await other.roles.acquire('connector:files', now)).toBeUndefined();
          expect((await other.roles.holdings(now)).roles).toEqual([{ role: 'connector:files', holder: holder.replicaId, since: now, fence }]);
          await holder.roles.release('connector:files');
          const taken = await other.roles.acquire('connector:files', now);
          expect(taken).toBeGreaterThan(fence);
          expect(await holder.roles.acquire('connector:files', now)).toBeUndefined();
          // A replica that stops gives up its roles: the other takes them at once.
          await other.stop();
          expect(await holder.roles.acquire('connector:files', now)).toBeGreaterThan(taken!);
        });

        it('gives each tick of a job to exactly one of the replicas asking at once', async () => {
          const one = await open();
          const two = await open('second');
          const now = Date.now();
          for (let slot = 1; slot <= 20; slot++) {
            const wins = await Promise.all([one.roles.claimTick('poll', slot * 1000, now), two.roles.claimTick('poll', slot * 1000, now)]);
            expect(wins.filter(Boolean)).toHaveLength(1);
          }
        });

        it('tells a replica when another made deliveries due or gave up a role', async () => {
          const one = await open();
          const two = await open('second');
          const heard: string[] = [];
          two.watch((change) => heard.push(change));
          // The listener's first look on connecting comes first; then what the other replica does.
          await expect.poll(() => heard.length).toBeGreaterThanOrEqual(2);
          heard.length = 0;
          await one.outbox.enqueue([record('w1', 'k:w1')]);
          await expect.poll(() => heard).toContain('outbox');
          await one.roles.acquire('reconcile', Date.now());
          await one.roles.release('reconcile');
          await expect.poll(() => heard).toContain('roles');
        });
      });
    }
  });
}
