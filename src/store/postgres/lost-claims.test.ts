import pg from 'pg';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { testDatabase } from '../../../test/support/pg-database.js';
import { startPgProxy } from '../../../test/support/pg-proxy.js';
import { NOW, done, event, outcome, record, retryLater } from '../conformance/support.js';
import type { Claimed, Store } from '../port.js';
import { LostClaims } from './lost-claims.js';
import { createPgStore } from './pg-store.js';

const ends: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const end of ends.splice(0).reverse()) await end();
});

/** A store reached through a proxy that can lose a commit's answer, and a direct look at its leases. */
async function setUp() {
  const url = await testDatabase('lost');
  const proxy = await startPgProxy(url);
  ends.push(() => proxy.close());
  // No heartbeat while the test runs: its commit must not be the one whose answer is lost.
  const store: Store = createPgStore({ url: proxy.url, log: pino({ level: 'silent' }), heartbeatMs: 3_600_000 });
  await store.start();
  ends.push(() => store.stop());
  const direct = new pg.Client({ connectionString: url });
  await direct.connect();
  ends.push(() => direct.end());
  const leasedTo = async (table: 'outbox_log_cursor' | 'outbox_delivery') =>
    (await direct.query<{ owner: string }>(`SELECT lease_owner AS owner FROM schoolbridge.${table} WHERE lease_owner IS NOT NULL`)).rows.map((r) => r.owner);
  return { proxy, store, leasedTo };
}

describe('a claim whose answer was lost, on postgres', () => {
  it('leaves no part of the log leased: the next claim takes its records, and batches still held stay held', async () => {
    const { proxy, store, leasedTo } = await setUp();
    const claim = () => store.outbox.claim({ connector: 'a', limit: 10, now: NOW, leaseMs: 600_000 });
    // Keys in different parts of the log (log-parts.test.ts pins them: 1 and 8).
    await store.inbox.accept(event('e1'), [record('events:1', 'events:1')]);
    const held = await claim();
    expect(held.map((c) => c.delivery.recordId)).toEqual(['events:1']);
    await store.inbox.accept(event('e2'), [record('invoices:1', 'invoices:1')]);

    const dropped = proxy.loseNextCommitAnswer();
    await expect(claim()).rejects.toThrow();
    await dropped;
    // The lost claim committed: two parts are leased to this replica, one of them by no batch of it.
    expect(await leasedTo('outbox_log_cursor')).toEqual([store.replicaId, store.replicaId]);

    const again = await claim();
    expect(again.map((c) => c.delivery.recordId)).toEqual(['invoices:1']);
    expect(await store.outbox.settle([outcome(held[0]!, done), outcome(again[0]!, done)])).toEqual([held[0]!.delivery.id, again[0]!.delivery.id]);
    expect(await leasedTo('outbox_log_cursor')).toEqual([]);
  });

  it('leaves no delivery row leased either', async () => {
    const { proxy, store, leasedTo } = await setUp();
    const later = NOW + 60_000;
    const claim = (now = NOW) => store.outbox.claim({ connector: 'a', limit: 10, now, leaseMs: 600_000 });
    await store.inbox.accept(event('e1'), [record('events:1', 'events:1')]);
    const [first] = await claim();
    // A record that failed is a row, due again at `later`.
    await store.outbox.settle([outcome(first!, (id, fence) => retryLater(id, fence, 1, later))]);

    const dropped = proxy.loseNextCommitAnswer();
    await expect(claim(later)).rejects.toThrow();
    await dropped;
    expect(await leasedTo('outbox_delivery')).toEqual([store.replicaId]);

    const again = await claim(later);
    expect(again.map((c) => c.delivery.recordId)).toEqual(['events:1']);
    expect(await store.outbox.settle([outcome(again[0]!, done)])).toEqual([again[0]!.delivery.id]);
  });
});

describe('LostClaims', () => {
  const claimed = (id: string, fence: number, leaseUntil: number, log?: { part: number; seq: number }): Claimed => ({
    delivery: { id: `a:${id}`, connector: 'a', recordId: id, stream: 'events', orderKey: id, seq: 1, status: 'active', enqueuedAt: 0, runAt: 0, attempts: 1, fence, leaseUntil, ...(log ? { log } : {}) },
  });

  it('asks for no freeing until a claim of the connector failed, nor while another claim of it is in flight', () => {
    const lost = new LostClaims();
    expect(lost.begin('a', 0)).toBeUndefined();
    lost.answered('a', [claimed('r1', 3, 100)], false);
    expect(lost.begin('a', 0)).toBeUndefined();
    lost.failed('a');
    expect(lost.begin('b', 0)).toBeUndefined();
    lost.answered('b', [], false);
    const first = lost.begin('a', 0);
    expect(first).toEqual({ parts: [], rows: [{ id: 'a:r1', fence: 3 }], ranges: [] });
    expect(lost.begin('a', 0)).toBeUndefined();
    lost.answered('a', [], false);
    lost.answered('a', [claimed('r2', 4, 100, { part: 7, seq: 9 })], true);
    // Freed: no more freeing until a claim fails again.
    expect(lost.begin('a', 0)).toBeUndefined();
    lost.failed('a');
    expect(lost.begin('a', 0)).toEqual({ parts: [{ part: 7, fence: 4 }], rows: [{ id: 'a:r1', fence: 3 }], ranges: [] });
  });

  it('holds a range batch\'s change also as the row it becomes when the snapshot moves (materializeCreated)', () => {
    const lost = new LostClaims();
    const fromRange: Claimed = { delivery: { ...claimed('users:1:c1', 6, 100).delivery, range: { stream: 'users', part: 2, key: 1, chain: 'c1' } } };
    lost.answered('a', [fromRange], false);
    lost.failed('a');
    expect(lost.begin('a', 0)).toEqual({ parts: [], rows: [{ id: 'a:users:1:c1', fence: 6 }], ranges: [{ stream: 'users', part: 2, fence: 6 }] });
  });

  it('forgets a lease once settled or run out', () => {
    const lost = new LostClaims();
    lost.answered('a', [claimed('r1', 3, 100), claimed('r2', 5, 50)], false);
    lost.settled([{ id: 'a:r1', fence: 3, connector: 'a', status: 'done', at: 0 }]);
    lost.failed('a');
    expect(lost.begin('a', 60)).toEqual({ parts: [], rows: [], ranges: [] });
  });
});
