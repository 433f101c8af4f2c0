import { describe, expect, it } from 'vitest';
import { NOW, done, event, record, type Harness } from './support.js';

export function inboxCases({ open, claim }: Harness): void {
  describe('inbox', () => {
    it('stores an event with its records in one transaction, and a second delivery is a duplicate', async () => {
      const store = await open();
      expect(await store.inbox.accept(event('e1'), [record('events:e1', 'events:1', ['a', 'b'])])).toBe('stored');
      expect(await store.inbox.accept(event('e1'), [record('events:e1', 'events:1', ['a', 'b'])])).toBe('duplicate');
      expect((await store.inbox.get('e1'))?.recordIds).toEqual(['events:e1']);
      expect((await store.outbox.list()).map((d) => d.id)).toEqual(['a:events:e1', 'b:events:e1']);
    });

    it('tells how long its transactions that write run and how long making them durable takes', async () => {
      const transactions: number[] = [];
      const syncs: number[] = [];
      const store = await open('open', { timings: { transaction: (s) => transactions.push(s), sync: (s) => syncs.push(s) } });
      const before = { transactions: transactions.length, syncs: syncs.length };
      expect(await store.inbox.accept(event('e1'), [record('events:e1', 'events:1')])).toBe('stored');
      // Heard by the time the accept resolves (on PostgreSQL one statement: its commit is within it).
      expect(transactions.length).toBeGreaterThan(before.transactions);
      const afterAccept = { transactions: transactions.length, syncs: syncs.length };
      await store.state.put({ timed: 1 });
      expect(transactions.length).toBeGreaterThan(afterAccept.transactions);
      expect(syncs.length).toBeGreaterThan(before.syncs);
      for (const seconds of [...transactions, ...syncs]) {
        expect(Number.isFinite(seconds)).toBe(true);
        expect(seconds).toBeGreaterThanOrEqual(0);
        expect(seconds).toBeLessThan(60);
      }
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
      expect(await store.inbox.prune(NOW - 1, 100)).toBe(1);
      expect(await store.inbox.get('old')).toBeUndefined();
      expect(await store.inbox.get('r1')).toBeDefined();
    });

    it('forgets old events a chunk at a time, the oldest first, and none that is recent', async () => {
      const store = await open();
      const ages = [5, 1, 4, 2, 3];
      for (const age of ages) await store.inbox.accept(event(`old${age}`, { receivedAtMs: NOW - age * 1000 }), []);
      await store.inbox.accept(event('recent'), []);
      const left = async () => (await Promise.all(['old1', 'old2', 'old3', 'old4', 'old5', 'recent'].map(async (id) => ((await store.inbox.get(id)) ? id : undefined)))).filter(Boolean);
      expect(await store.inbox.prune(NOW - 1, 2)).toBe(2);
      expect(await left()).toEqual(['old1', 'old2', 'old3', 'recent']);
      expect(await store.inbox.prune(NOW - 1, 2)).toBe(2);
      expect(await store.inbox.prune(NOW - 1, 2)).toBe(1);
      expect(await store.inbox.prune(NOW - 1, 2)).toBe(0);
      expect(await left()).toEqual(['recent']);
    });
  });

}
