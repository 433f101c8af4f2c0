import { describe, expect, it } from 'vitest';
import { NOW, done, event, record, type Harness } from './support.js';
import { REPLICA_TTL_MS } from '../tables.js';

export function stateCases({ shared, open, claim }: Harness): void {
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
      expect(await store.roles.claimTick('poll', 60_000, NOW)).toBe('mine');
      expect(await store.roles.claimTick('poll', 60_000, NOW)).not.toBe('mine');
      expect(await store.roles.claimTick('poll', 0, NOW)).toBe('settled');
      expect(await store.roles.claimTick('export', 60_000, NOW)).toBe('mine');
      expect(await store.roles.claimTick('poll', 120_000, NOW)).toBe('mine');
      await store.roles.finishTick('poll', 120_000, NOW + 5);
      expect(await store.roles.claimTick('poll', 120_000, NOW + 10)).toBe('settled');
      const { ticks } = await store.roles.holdings(NOW);
      expect(ticks.map((t) => [t.job, t.slot, t.replica, t.doneAt])).toEqual([['export', 60_000, store.replicaId, undefined], ['poll', 120_000, store.replicaId, NOW + 5]]);
    });

    it('never forgets its own replica row, however old its heartbeat', async () => {
      const store = await open();
      await store.replicas.beat(NOW);
      expect(await store.replicas.forget(NOW + 60_000)).toBe(0);
      expect((await store.replicas.live(0)).map((r) => r.id)).toContain(store.replicaId);
    });
  });

  if (shared) {
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
          const claims = await Promise.all([one.roles.claimTick('poll', slot * 1000, now), two.roles.claimTick('poll', slot * 1000, now)]);
          expect(claims.sort()).toEqual(['mine', 'taken']);
        }
      });

      it('gives a tick again once the replica that claimed it is no longer live', async () => {
        const one = await open();
        const two = await open('second');
        const now = Date.now();
        expect(await one.roles.claimTick('poll', 5_000, now)).toBe('mine');
        expect(await two.roles.claimTick('poll', 5_000, now)).toBe('taken');
        // Stopped (as if dead and found so) before it noted the end of its run: the run may not have been.
        await one.stop();
        expect(await two.roles.claimTick('poll', 5_000, now)).toBe('mine');
        expect(await two.roles.claimTick('poll', 5_000, now)).toBe('taken');
      });

      it('never gives a tick again once the run of the replica that claimed it ended, nor an older one', async () => {
        const one = await open();
        const two = await open('second');
        const now = Date.now();
        expect(await one.roles.claimTick('export', 5_000, now)).toBe('mine');
        await two.roles.finishTick('export', 5_000, now);
        expect(await two.roles.claimTick('export', 5_000, now)).toBe('taken');
        await one.roles.finishTick('export', 5_000, now + 10);
        expect(await two.roles.claimTick('export', 5_000, now + 20)).toBe('settled');
        await one.stop();
        expect(await two.roles.claimTick('export', 5_000, now + REPLICA_TTL_MS + 1)).toBe('settled');
        expect(await two.roles.claimTick('export', 4_000, now)).toBe('settled');
        // The next tick is a new one: its run has not ended.
        expect(await two.roles.claimTick('export', 6_000, now)).toBe('mine');
        expect((await two.roles.holdings(now)).ticks).toEqual([{ job: 'export', slot: 6_000, replica: two.replicaId, claimedAt: now }]);
      });

      it('takes no role from a holder whose heartbeat is old until it has itself reached the store for a heartbeat\'s life', async () => {
        const one = await open();
        const now = Date.now();
        expect(await one.roles.acquire('connector:sheet', now)).toBeDefined();
        // The store was away: the holder's heartbeat is old, and the other has only just come back.
        await one.replicas.beat(now - REPLICA_TTL_MS - 5_000);
        const two = await open('second');
        expect(await two.roles.acquire('connector:sheet', now)).toBeUndefined();
        // A heartbeat's life on, the holder has not beaten since: it is gone.
        expect(await two.roles.acquire('connector:sheet', now + REPLICA_TTL_MS + 1_000)).toBeDefined();
        // A role given up is taken at once.
        expect(await one.roles.acquire('connector:ledger', now)).toBeDefined();
        await one.roles.release('connector:ledger');
        const three = await open('second');
        expect(await three.roles.acquire('connector:ledger', now)).toBeDefined();
      });

      it('keeps a tick claimed just now by a replica whose heartbeat is old, as after an outage of the store', async () => {
        const one = await open();
        const two = await open('second');
        const now = Date.now();
        // The database was away for longer than a heartbeat's life: both come back with old ones.
        await one.replicas.beat(now - REPLICA_TTL_MS - 5_000);
        await two.replicas.beat(now - REPLICA_TTL_MS - 5_000);
        expect(await one.roles.claimTick('poll', 5_000, now)).toBe('mine');
        expect(await two.roles.claimTick('poll', 5_000, now + 100)).toBe('taken');
        // Found dead only once its claim is as old as a heartbeat's life, with no heartbeat since.
        expect(await two.roles.claimTick('poll', 5_000, now + REPLICA_TTL_MS + 1)).toBe('mine');
      });

      it('forgets the rows of other replicas last seen before a time, and no other', async () => {
        const one = await open();
        const two = await open('second');
        const three = await open('second');
        await one.replicas.beat(NOW);
        await two.replicas.beat(NOW + 10_000);
        await three.replicas.beat(NOW + 20_000);
        expect(await three.replicas.forget(NOW + 10_000)).toBe(1);
        expect((await three.replicas.live(0)).map((r) => r.id).sort()).toEqual([two.replicaId, three.replicaId].sort());
      });

      it('tells a replica when another made deliveries due or gave up a role', async () => {
        const one = await open();
        const two = await open('second');
        const heard: string[] = [];
        two.watch((change) => heard.push(change));
        // A replica listens once its start has returned.
        await one.outbox.enqueue([record('w1', 'k:w1')]);
        await expect.poll(() => heard).toContain('outbox');
        heard.length = 0;
        // A webhook event stored with its records (one batched statement, not a transaction).
        expect(await one.inbox.accept(event('w2'), [record('events:w2', 'k:w2')])).toBe('stored');
        await expect.poll(() => heard).toContain('outbox');
        await one.roles.acquire('reconcile', Date.now());
        await one.roles.release('reconcile');
        await expect.poll(() => heard).toContain('roles');
      });
    });
  }
}
