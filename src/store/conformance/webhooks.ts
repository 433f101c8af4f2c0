import { describe, expect, it } from 'vitest';
import { partOf } from '../log-parts.js';
import type { Claimed, Store } from '../port.js';
import { NOW, dead, done, event, outcome, record, retryLater, type Harness } from './support.js';
import { TAKEOVER_GRACE_MS } from '../tables.js';

/**
 * The deliveries of webhooks' records (`inbox.accept`), which an engine may keep apart from the
 * queued ones (the delivery log): the same promises of order, leases, listing and counts.
 */
export function webhookCases({ open, claim, shared }: Harness): void {
  const accept = (store: Store, id: string, key: string, connectors = ['a']) =>
    store.inbox.accept(event(id), [record(`events:${id}`, key, connectors, `{"id":"${id}"}`)]);
  const settleAll = (store: Store, claimed: readonly Claimed[], how = done) => store.outbox.settle(claimed.map((c) => outcome(c, how)));

  describe('webhook records', () => {
    it('are listed, counted and got as pending once accepted, and as active while claimed', async () => {
      const store = await open();
      await accept(store, 'w1', 'events:1', ['a', 'b']);
      await accept(store, 'w2', 'events:2');
      expect((await store.outbox.list()).map((d) => [d.id, d.status])).toEqual([
        ['a:events:w1', 'pending'], ['b:events:w1', 'pending'], ['a:events:w2', 'pending'],
      ]);
      expect((await store.outbox.counts()).get('a')).toEqual({ depth: 2, dead: 0 });
      expect(await store.outbox.get('b:events:w1')).toMatchObject({ recordId: 'events:w1', orderKey: 'events:1', status: 'pending', attempts: 0 });
      // By id, whichever part of the log a record is in; a connector that is not owed it, or an id
      // that names no connector, finds nothing.
      expect(await store.outbox.get('a:events:w2')).toMatchObject({ recordId: 'events:w2', orderKey: 'events:2', status: 'pending' });
      expect(await store.outbox.get('c:events:w1')).toBeUndefined();
      expect(await store.outbox.get('events')).toBeUndefined();
      expect((await store.outbox.lookup({ ids: ['a:events:w2', 'c:events:w1', 'b:events:w1', 'events'] })).map((d) => d.id)).toEqual(['b:events:w1', 'a:events:w2']);
      expect(await store.outbox.nextRunAt('a')).toBeLessThanOrEqual(NOW);
      const claimed = await claim(store);
      expect(claimed.map((c) => [c.delivery.id, c.json])).toEqual([['a:events:w1', '{"id":"w1"}'], ['a:events:w2', '{"id":"w2"}']]);
      expect((await store.outbox.list({ state: 'active' })).map((d) => d.id)).toEqual(['a:events:w1', 'a:events:w2']);
      expect(await store.outbox.get('a:events:w1')).toMatchObject({ status: 'active', fence: claimed[0]!.delivery.fence });
      expect(await settleAll(store, claimed)).toEqual(['a:events:w1', 'a:events:w2']);
      expect((await store.outbox.list()).map((d) => d.id)).toEqual(['b:events:w1']);
      expect(await store.outbox.get('a:events:w1')).toBeUndefined();
      expect((await store.outbox.counts()).get('a')?.depth ?? 0).toBe(0);
      expect((await store.outbox.lookup({ keys: [{ connector: 'b', orderKey: 'events:1' }] })).map((d) => d.id)).toEqual(['b:events:w1']);
    });

    it('go out one at a time per key, in the order accepted, while other keys go beside them', async () => {
      const store = await open();
      // The other keys first: an engine may end a batch at the second record of a key.
      for (let i = 0; i < 8; i++) await accept(store, `o${i}`, `events:other-${i}`);
      for (let i = 0; i < 4; i++) await accept(store, `k${i}`, 'events:same');
      const first = await claim(store, 'a', 100);
      expect(first.filter((c) => c.delivery.orderKey === 'events:same').map((c) => c.delivery.recordId)).toEqual(['events:k0']);
      expect(first.filter((c) => c.delivery.orderKey !== 'events:same')).toHaveLength(8);
      const order = ['events:k0'];
      let batch = first;
      for (;;) {
        await settleAll(store, batch);
        batch = await claim(store, 'a', 100);
        if (batch.length === 0) break;
        expect(batch).toHaveLength(1);
        order.push(batch[0]!.delivery.recordId);
      }
      expect(order).toEqual(['events:k0', 'events:k1', 'events:k2', 'events:k3']);
    });

    it('are listed waiting behind the delivery of their key in flight, and looked up so', async () => {
      const store = await open();
      await accept(store, 'w1', 'events:same');
      await accept(store, 'w2', 'events:other');
      await accept(store, 'w3', 'events:same');
      const claimed = await claim(store, 'a', 100);
      expect(claimed.map((c) => c.delivery.id)).toEqual(['a:events:w1', 'a:events:w2']);
      const shown = (list: readonly { id: string; status: string; waitingFor?: string }[]) => list.map((d) => [d.id, d.status, d.waitingFor]);
      expect(shown(await store.outbox.list())).toEqual([
        ['a:events:w1', 'active', undefined], ['a:events:w2', 'active', undefined], ['a:events:w3', 'pending', 'a:events:w1'],
      ]);
      expect(shown(await store.outbox.lookup({ keys: [{ connector: 'a', orderKey: 'events:same' }] }))).toEqual([
        ['a:events:w1', 'active', undefined], ['a:events:w3', 'pending', 'a:events:w1'],
      ]);
      await settleAll(store, claimed);
      expect(shown(await store.outbox.list())).toEqual([['a:events:w3', 'pending', undefined]]);
    });

    it('come in one batch in the order accepted, whatever keys they have', async () => {
      const store = await open();
      // Keys of the log's parts 8, 5 and 1 (log-parts.test.ts): accepted in the reverse of that order.
      await accept(store, 'x1', 'invoices:1');
      await accept(store, 'x2', '');
      await accept(store, 'x3', 'events:1');
      expect((await claim(store, 'a', 10)).map((c) => c.delivery.recordId)).toEqual(['events:x1', 'events:x2', 'events:x3']);
    });

    it('are listed in flight up to the limit, past older ones that are not', async () => {
      const store = await open();
      // Parts 8 and 1 (log-parts.test.ts): a claim of one takes the lower part's record, the newer one.
      await accept(store, 'n1', 'invoices:1');
      await accept(store, 'n2', 'events:1');
      const inFlight = await claim(store, 'a', 1);
      expect(inFlight.map((c) => c.delivery.recordId)).toEqual(['events:n2']);
      expect((await store.outbox.list({ state: 'active', limit: 1 })).map((d) => d.id)).toEqual(['a:events:n2']);
      expect((await store.outbox.list({ limit: 1 })).map((d) => d.id)).toEqual(['a:events:n1']);
      expect((await store.outbox.list({ state: 'pending', connector: 'a' })).map((d) => [d.id, d.status])).toEqual([
        ['a:events:n1', 'pending'], ['a:events:n2', 'active'],
      ]);
    });

    it('have several batches in flight at once for one connector', async () => {
      const store = await open();
      for (let i = 0; i < 16; i++) await accept(store, `p${i}`, `events:p${i}`);
      const inFlight: Claimed[] = [];
      for (let i = 0; i < 4; i++) inFlight.push(...await claim(store, 'a', 1));
      expect(new Set(inFlight.map((c) => c.delivery.orderKey)).size).toBe(4);
      // Settled out of the order claimed: each batch on its own.
      for (const c of [...inFlight].reverse()) expect(await settleAll(store, [c])).toEqual([c.delivery.id]);
      let left = 0;
      for (let batch = await claim(store, 'a', 100); batch.length > 0; batch = await claim(store, 'a', 100)) {
        left += batch.length;
        await settleAll(store, batch);
      }
      expect(left).toBe(12);
    });

    it('hold their key after a failure: the next waits behind the retry, and a dead one until retried by hand', async () => {
      const store = await open();
      await accept(store, 'f1', 'events:f');
      await accept(store, 'g1', 'events:g');
      await accept(store, 'f2', 'events:f');
      const [f1, g1] = await claim(store);
      await store.outbox.settle([outcome(f1!, (id, fence) => retryLater(id, fence, 1)), outcome(g1!, (id, fence) => dead(id, fence, 1))]);
      expect(await claim(store)).toEqual([]);
      const pending = await store.outbox.list({ state: 'pending' });
      expect(pending.find((d) => d.recordId === 'events:f1')).toMatchObject({ status: 'pending', attempts: 1, lastError: 'x', runAt: NOW + 60_000 });
      expect((await store.outbox.list({ state: 'dead' })).map((d) => d.id)).toEqual(['a:events:g1']);
      expect((await store.outbox.counts()).get('a')).toEqual({ depth: 2, dead: 1 });
      const again = await claim(store, 'a', 10, NOW + 60_000);
      expect(again.map((c) => c.delivery.recordId)).toEqual(['events:f1']);
      await settleAll(store, again);
      const next = await claim(store, 'a', 10, NOW + 60_000);
      expect(next.map((c) => c.delivery.recordId)).toEqual(['events:f2']);
      await settleAll(store, next);
      await accept(store, 'g2', 'events:g');
      expect(await claim(store, 'a', 10, NOW + 60_000)).toEqual([]);
      expect((await store.outbox.retryDead({ after: 0, limit: 10 }, NOW + 60_001)).ids).toEqual(['a:events:g1']);
      const retried = await claim(store, 'a', 10, NOW + 60_001);
      expect(retried.map((c) => c.delivery.recordId)).toEqual(['events:g1']);
      await settleAll(store, retried);
      expect((await claim(store, 'a', 10, NOW + 60_001)).map((c) => c.delivery.recordId)).toEqual(['events:g2']);
    });

    it('are counted once while one waits as a row behind its key, beside a batch in flight of its part', async () => {
      const store = await open();
      // Two keys of one part: the record made a row at the claim stays after the part's cursor while the batch is out.
      const other = Array.from({ length: 64 }, (_, i) => `events:h${i}`).find((key) => partOf(key) === partOf('events:f'))!;
      await accept(store, 'f1', 'events:f');
      const [f1] = await claim(store);
      await store.outbox.settle([outcome(f1!, (id, fence) => dead(id, fence, 1))]);
      await accept(store, 'f2', 'events:f');
      await accept(store, 'h1', other);
      const batch = await claim(store, 'a', 10);
      expect(batch.map((c) => c.delivery.recordId)).toEqual(['events:h1']);
      expect((await store.outbox.counts()).get('a')).toEqual({ depth: 2, dead: 1 });
      // The same once the batch's lease has run out, and once it is delivered.
      const over = NOW + 60_000 + TAKEOVER_GRACE_MS;
      await store.outbox.sweep(over);
      expect((await store.outbox.counts()).get('a')).toEqual({ depth: 2, dead: 1 });
      const again = await claim(store, 'a', 10, over);
      expect(again.map((c) => c.delivery.recordId)).toEqual(['events:h1']);
      await settleAll(store, again);
      expect((await store.outbox.counts()).get('a')).toEqual({ depth: 1, dead: 1 });
      expect((await store.outbox.list()).map((d) => [d.id, d.status])).toEqual([['a:events:f1', 'dead'], ['a:events:f2', 'pending']]);
    });

    it('wait behind a delivery of their key queued before them', async () => {
      const store = await open();
      await store.outbox.enqueue([record('events:queued', 'events:q')]);
      await accept(store, 'q1', 'events:q');
      const first = await claim(store);
      expect(first.map((c) => c.delivery.recordId)).toEqual(['events:queued']);
      await settleAll(store, first);
      expect((await claim(store)).map((c) => c.delivery.recordId)).toEqual(['events:q1']);
    });

    it('are claimed again once a lease runs out, and the late settlement is refused', async () => {
      const store = await open();
      await accept(store, 'l1', 'events:l');
      const [first] = await claim(store);
      const over = NOW + 60_000 + TAKEOVER_GRACE_MS;
      expect((await store.outbox.sweep(over)).reclaimed).toBeGreaterThanOrEqual(1);
      const [second] = await claim(store, 'a', 10, over);
      expect(second?.delivery.recordId).toBe('events:l1');
      expect(second!.delivery.fence).toBeGreaterThan(first!.delivery.fence);
      expect(await store.outbox.settle([outcome(first!, done)])).toEqual([]);
      expect(await store.outbox.settle([outcome(second!, done)])).toEqual(['a:events:l1']);
      expect(await store.outbox.list()).toEqual([]);
    });

    it('of a reprocessed event go after those of its key still queued', async () => {
      const store = await open();
      await accept(store, 'r1', 'events:r');
      expect(await store.inbox.reprocess('r1', 0, ['events:r1', 'events:r1:x'], [record('events:r1:x', 'events:r')])).toBe(true);
      const order: string[] = [];
      for (let batch = await claim(store); batch.length > 0; batch = await claim(store)) {
        order.push(...batch.map((c) => c.delivery.recordId));
        await settleAll(store, batch);
      }
      expect(order).toEqual(['events:r1', 'events:r1:x']);
    });

    it('stay for a connector that has not taken them when another has', async () => {
      const store = await open();
      await accept(store, 'c1', 'events:c', ['a', 'gone']);
      await settleAll(store, await claim(store));
      await store.outbox.sweep(NOW);
      expect((await store.outbox.list()).map((d) => d.id)).toEqual(['gone:events:c1']);
      expect((await claim(store, 'gone')).map((c) => c.json)).toEqual(['{"id":"c1"}']);
    });

    if (shared) {
      it('are all delivered when replicas accept them while others claim (the log is read in commit order)', async () => {
        const one = await open();
        const two = await open('second');
        let accepting = true;
        const seen: string[] = [];
        const claiming = (async () => {
          for (let idle = 0; idle < 3;) {
            const batch = await claim(one, 'a', 50);
            seen.push(...batch.map((c) => c.delivery.recordId));
            await settleAll(one, batch);
            idle = batch.length === 0 && !accepting ? idle + 1 : 0;
          }
        })();
        await Promise.all([one, two].map(async (store, n) => {
          for (let i = 0; i < 150; i += 5) {
            await Promise.all(Array.from({ length: 5 }, (_, j) => accept(store, `c${n}-${i + j}`, `events:c${(i + j) % 7}`)));
          }
        }));
        accepting = false;
        await claiming;
        expect(seen).toHaveLength(300);
        expect(new Set(seen).size).toBe(300);
      });

      it('are claimed by one replica at a time', async () => {
        const one = await open();
        const two = await open('second');
        for (let i = 0; i < 40; i++) await accept(one, `s${i}`, `events:s${i % 10}`);
        const seen: string[] = [];
        for (;;) {
          const [a, b] = await Promise.all([claim(one, 'a', 7), claim(two, 'a', 7)]);
          if (a.length + b.length === 0) break;
          seen.push(...a.map((c) => c.delivery.recordId), ...b.map((c) => c.delivery.recordId));
          await Promise.all([settleAll(one, a), settleAll(two, b)]);
        }
        expect(seen).toHaveLength(40);
        expect(new Set(seen).size).toBe(40);
        const byKey = new Map<string, number[]>();
        for (const id of seen) {
          const n = Number(id.slice('events:s'.length));
          byKey.set(`${n % 10}`, [...(byKey.get(`${n % 10}`) ?? []), n]);
        }
        for (const list of byKey.values()) expect(list).toEqual([...list].sort((x, y) => x - y));
      });
    }
  });
}
