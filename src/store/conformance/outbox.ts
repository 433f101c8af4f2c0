import { describe, expect, it } from 'vitest';
import { NOW, dead, done, record, retryLater, type Harness } from './support.js';
import { TAKEOVER_GRACE_MS } from '../tables.js';

export function outboxCases({ open, claim }: Harness): void {
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

    it('retries the dead a chunk at a time in enqueue order, of one connector or of all, and none twice', async () => {
      const store = await open();
      await store.outbox.enqueue(['d1', 'd2', 'd3', 'd4', 'd5'].map((id) => record(id, `k:${id}`, ['a', 'b'])));
      for (const connector of ['a', 'b']) {
        const claimed = await claim(store, connector);
        await store.outbox.settle(claimed.map((c) => dead(c.delivery.id, c.delivery.fence, 1, connector)));
      }
      const first = await store.outbox.retryDead({ connector: 'a', after: 0, limit: 2 }, NOW + 1);
      expect(first.ids).toEqual(['a:d1', 'a:d2']);
      // Retried and dead again: a later chunk, which starts after the last one, does not take it again.
      const [again] = await claim(store, 'a', 1, NOW + 1);
      expect(again?.delivery.id).toBe('a:d1');
      await store.outbox.settle([dead(again!.delivery.id, again!.delivery.fence, 1)]);
      const second = await store.outbox.retryDead({ connector: 'a', after: first.last!, limit: 2 }, NOW + 1);
      expect(second.ids).toEqual(['a:d3', 'a:d4']);
      const third = await store.outbox.retryDead({ connector: 'a', after: second.last!, limit: 2 }, NOW + 1);
      expect(third.ids).toEqual(['a:d5']);
      expect(await store.outbox.retryDead({ connector: 'a', after: third.last!, limit: 2 }, NOW + 1)).toEqual({ ids: [], last: undefined });
      // Of every connector: in enqueue order, whichever connector.
      const all = await store.outbox.retryDead({ after: 0, limit: 10 }, NOW + 1);
      expect(all.ids).toEqual(['a:d1', 'b:d1', 'b:d2', 'b:d3', 'b:d4', 'b:d5']);
      expect((await store.outbox.counts()).get('b')).toMatchObject({ dead: 0 });
    });

    it('lists the dead a chunk at a time in enqueue order, of one connector or of all, as list gives them', async () => {
      const store = await open();
      await store.outbox.enqueue(['d1', 'd2', 'd3', 'p1'].map((id) => record(id, `k:${id}`, ['a', 'b'])));
      for (const connector of ['a', 'b']) {
        const claimed = await claim(store, connector);
        await store.outbox.settle(claimed.map((c) => (c.delivery.recordId === 'p1'
          ? retryLater(c.delivery.id, c.delivery.fence, 1, NOW + 60_000, connector) : dead(c.delivery.id, c.delivery.fence, 1, connector))));
      }
      const first = await store.outbox.listDead({ connector: 'a', after: 0, limit: 2 });
      expect(first.map((d) => d.id)).toEqual(['a:d1', 'a:d2']);
      expect(first).toEqual((await store.outbox.list({ state: 'dead', connector: 'a' })).slice(0, 2));
      expect(first[0]).toMatchObject({ status: 'dead', attempts: 1, lastError: 'rejected', recordId: 'd1', orderKey: 'k:d1' });
      const second = await store.outbox.listDead({ connector: 'a', after: first[1]!.seq, limit: 2 });
      expect(second.map((d) => d.id)).toEqual(['a:d3']);
      expect(await store.outbox.listDead({ connector: 'a', after: second[0]!.seq, limit: 2 })).toEqual([]);
      // Of every connector: in enqueue order, whichever connector.
      expect((await store.outbox.listDead({ after: 0, limit: 10 })).map((d) => d.id)).toEqual(['a:d1', 'b:d1', 'a:d2', 'b:d2', 'a:d3', 'b:d3']);
      expect(await store.outbox.listDead({ connector: 'c', after: 0, limit: 10 })).toEqual([]);
    });

    it('lets a dead delivery hold back only its own key, and a retry by hand release it', async () => {
      const store = await open();
      await store.outbox.enqueue([record('d1', 'k:d'), record('d2', 'k:d'), record('o1', 'k:o')]);
      const [d1, o1] = await claim(store);
      await store.outbox.settle([dead(d1!.delivery.id, d1!.delivery.fence, 1), retryLater(o1!.delivery.id, o1!.delivery.fence, 1)]);
      expect(await claim(store)).toEqual([]);
      expect((await claim(store, 'a', 10, NOW + 60_000)).map((c) => c.delivery.recordId)).toEqual(['o1']);
      expect((await store.outbox.counts()).get('a')).toEqual({ depth: 2, dead: 1 });
      expect(await store.outbox.retryDead({ after: 0, limit: 10 }, NOW + 1)).toEqual({ ids: ['a:d1'], last: d1!.delivery.seq });
      const [again] = await claim(store, 'a', 10, NOW + 1);
      expect(again?.delivery).toMatchObject({ recordId: 'd1', attempts: 1 });
      await store.outbox.settle([done(again!.delivery.id, again!.delivery.fence)]);
      expect((await claim(store, 'a', 10, NOW + 1)).map((c) => c.delivery.recordId)).toEqual(['d2']);
    });

    it('starts the retry window of a delivery that waited behind a dead head when it becomes the head', async () => {
      const store = await open();
      await store.outbox.enqueue([record('d1', 'k:d'), record('d2', 'k:d')]);
      const [d1] = await claim(store);
      await store.outbox.settle([dead(d1!.delivery.id, d1!.delivery.fence, 1)]);
      expect(await claim(store)).toEqual([]);
      // Four days later the head is retried by hand and delivered: the one behind it has its whole window.
      const later = NOW + 4 * 24 * 3_600_000;
      await store.outbox.retryDead({ after: 0, limit: 10 }, later);
      const [again] = await claim(store, 'a', 10, later);
      await store.outbox.settle([{ ...done(again!.delivery.id, again!.delivery.fence), at: later }]);
      expect(await store.outbox.get('a:d2')).toMatchObject({ status: 'pending', enqueuedAt: later, attempts: 0 });
      const [d2] = await claim(store, 'a', 10, later);
      expect(d2?.delivery).toMatchObject({ recordId: 'd2', enqueuedAt: later });
    });

    it('lists the deliveries in flight up to the limit, past older ones that are not', async () => {
      const store = await open();
      await store.outbox.enqueue([record('r1', 'k:1'), record('r2', 'k:2'), record('r3', 'k:3')]);
      const [first] = await claim(store, 'a', 1);
      await store.outbox.settle([retryLater('a:r1', first!.delivery.fence, 1)]);
      const inFlight = await claim(store, 'a', 2);
      expect(inFlight.map((c) => c.delivery.id)).toEqual(['a:r2', 'a:r3']);
      expect((await store.outbox.list({ state: 'active', limit: 1 })).map((d) => d.id)).toEqual(['a:r2']);
      expect((await store.outbox.list({ state: 'active', limit: 5 })).map((d) => d.id)).toEqual(['a:r2', 'a:r3']);
      expect((await store.outbox.list({ state: 'pending', limit: 1 })).map((d) => d.id)).toEqual(['a:r1']);
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

    it('says when the next is due past more deliveries in flight than one read of the queue holds', async () => {
      const store = await open();
      await store.outbox.enqueue(Array.from({ length: 120 }, (_, i) => record(`f${i}`, `k:f${i}`)));
      expect(await claim(store, 'a', 119)).toHaveLength(119);
      // The last one is due since it was enqueued (by the store's clock), not once the leases run out.
      expect(await store.outbox.nextRunAt('a')).toBeLessThan(NOW);
      const [last] = await claim(store);
      await store.outbox.settle([retryLater(last!.delivery.id, last!.delivery.fence, 1, NOW + 30_000)]);
      expect(await store.outbox.nextRunAt('a')).toBe(NOW + 30_000);
    });

    it('refuses a settle under a fence that is not the current one, and returns expired leases', async () => {
      const store = await open();
      await store.outbox.enqueue([record('l1', 'k:l')]);
      const [first] = await claim(store);
      const over = NOW + 60_000 + TAKEOVER_GRACE_MS;
      expect(await store.outbox.sweep(over)).toEqual({ reclaimed: 1 });
      const [second] = await claim(store, 'a', 10, over);
      expect(second!.delivery.fence).toBeGreaterThan(first!.delivery.fence);
      expect(await store.outbox.settle([done('a:l1', first!.delivery.fence)])).toEqual([]);
      expect(await store.outbox.settle([done('a:l1', second!.delivery.fence)])).toEqual(['a:l1']);
    });

    it('keeps its own leases while its heartbeat is stale, until they run out', async () => {
      // A replica that sweeps is running: a heartbeat it could not write (a full disk) must not hand
      // its batches in flight to its own next claims, which would deliver them again. Another
      // replica's sweep returns them (postgres.test.ts, the replicas).
      const store = await open();
      await store.outbox.enqueue([record('h1', 'k:h')]);
      await claim(store);
      await store.replicas.beat(NOW);
      expect(await store.outbox.sweep(NOW + 1000)).toEqual({ reclaimed: 0 });
      expect(await store.outbox.sweep(NOW + 40_000)).toEqual({ reclaimed: 0 });
      expect(await claim(store, 'a', 10, NOW + 40_000)).toEqual([]);
      expect(await store.outbox.sweep(NOW + 60_000 + TAKEOVER_GRACE_MS)).toEqual({ reclaimed: 1 });
      expect((await store.replicas.live(NOW - 1)).map((r) => r.id)).toEqual([store.replicaId]);
    });
  });

}
