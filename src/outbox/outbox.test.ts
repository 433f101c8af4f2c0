import { describe, expect, it } from 'vitest';
import type { Connector } from '../connectors/types.js';
import { BridgeError } from '../errors.js';
import type { OutboxStore } from '../store/index.js';
import { change, nextEvent, roster, scriptedConnector } from '../../test/support/outbox.js';
import { retryable, rejected, deferred, counting, setup } from '../../test/support/outbox-setup.js';
import { ENGINES } from '../../test/support/stores.js';

describe.each(ENGINES)('outbox on %s', (engine) => {
  it('delivers every record once to every connector subscribed to its stream', async () => {
    const a = scriptedConnector();
    const b = scriptedConnector();
    const { outbox, store } = await setup([
      { name: 'a', connector: a.connector, streams: ['students'] },
      { name: 'b', connector: b.connector, streams: ['students', 'users'] },
    ], { engine });
    const s1 = change('students', 1);
    const u1 = change('users', 7);
    // Events come once the outcome is durable: a read started in the listener finds the delivery gone.
    const seen: Promise<unknown>[] = [];
    outbox.on('delivered', ({ delivery }) => seen.push(store.outbox.get(delivery.id).then((d) => [delivery.id, d?.status ?? 'gone'])));
    expect(outbox.subscribers('users')).toEqual(['b']);
    // The roster goes nowhere: nobody subscribes to it.
    expect(await outbox.enqueue([s1, u1, roster('2026-11-22')])).toBe(3);
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([s1.id]);
    expect(b.delivered().sort()).toEqual([s1.id, u1.id].sort());
    expect(b.received.find((r) => r.id === u1.id)?.json).toBe(JSON.stringify(u1));
    expect(outbox.deliveredCount()).toBe(3);
    expect((await Promise.all(seen)).sort()).toEqual([[`a:${s1.id}`, 'gone'], [`b:${s1.id}`, 'gone'], [`b:${u1.id}`, 'gone']]);
    expect(await outbox.list()).toEqual([]);
    expect(await outbox.counts()).toEqual(new Map());
  });

  it('keeps no credential of the connector that a receiver echoed in its error', async () => {
    const echo = scriptedConnector(() => ({ status: 'dead', error: new BridgeError('test.rejected', 'HTTP 401: invalid key apikey-SECRET-123') }));
    const { outbox } = await setup([{ name: 'a', connector: echo.connector, config: { headers: { 'X-Api-Key': 'apikey-SECRET-123' } } }], { engine });
    const dead = nextEvent(outbox, 'dead');
    await outbox.enqueue([change('students', 1)]);
    expect((await dead).delivery.lastError).toBe('test.rejected: HTTP 401: invalid key ***');
    expect((await outbox.list({ state: 'dead' })).map((d) => d.lastError)).toEqual(['test.rejected: HTTP 401: invalid key ***']);
  });

  it('keeps per-key order while a failing key holds back only itself, and retries it after its back-off', async () => {
    const failing = new Set<string>();
    const a = scriptedConnector((r) => (failing.has(r.id) ? retryable() : { status: 'done' }));
    const { outbox, clock } = await setup([{ name: 'a', connector: a.connector }], { engine, concurrency: 1 });
    const create1 = change('students', 1, 'created');
    const create2 = change('students', 2, 'created');
    const update1 = change('students', 1, 'updated');
    const update2 = change('students', 2, 'updated');
    const update1b = change('students', 1, 'updated');
    failing.add(create1.id);
    const retry = nextEvent(outbox, 'retry');
    await outbox.enqueue([create1, create2, update1, update2, update1b]);
    expect((await retry).error?.code).toBe('test.unavailable');
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([create1.id, create2.id, update2.id]);
    expect(await outbox.get(`a:${create1.id}`)).toMatchObject({ status: 'pending', attempts: 1, runAt: clock.now() + 1000, lastError: 'test.unavailable: try later' });
    expect((await outbox.list({ state: 'pending' })).map((d) => [d.recordId, d.waitingFor])).toEqual([
      [create1.id, undefined],
      [update1.id, `a:${create1.id}`],
      [update1b.id, `a:${create1.id}`],
    ]);

    failing.clear();
    clock.advance(999);
    await outbox.whenIdle();
    expect(a.delivered()).toHaveLength(3); // not before its back-off
    const last = nextEvent(outbox, 'delivered', (p) => p.delivery.recordId === update1b.id);
    clock.advance(1);
    await last;
    expect(a.delivered().slice(3)).toEqual([create1.id, update1.id, update1b.id]);
  });

  it('a 4xx-like outcome is dead at once, keeps its record and holds its key until retried by hand', async () => {
    let reject = true;
    const first = change('students', 5, 'created');
    const second = change('students', 5, 'updated');
    const a = scriptedConnector((r) => (reject && r.id === first.id ? rejected() : { status: 'done' }));
    const { outbox, clock } = await setup([{ name: 'a', connector: a.connector }], { engine });
    const dead = nextEvent(outbox, 'dead');
    await outbox.enqueue([first, second]);
    const { delivery, error } = await dead;
    expect(delivery).toMatchObject({ id: `a:${first.id}`, status: 'dead', attempts: 1, lastError: 'test.rejected: the receiver answered 400' });
    expect(error?.code).toBe('test.rejected');
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([first.id]);
    expect((await outbox.list()).map((d) => [d.recordId, d.status, d.waitingFor])).toEqual([
      [first.id, 'dead', undefined],
      [second.id, 'pending', `a:${first.id}`],
    ]);
    expect((await outbox.counts()).get('a')).toEqual({ depth: 1, dead: 1 });

    reject = false;
    clock.advance(60_000);
    const redelivered = nextEvent(outbox, 'delivered', (p) => p.delivery.recordId === first.id);
    const retried = await outbox.retry(`a:${first.id}`);
    // A fresh retry window from now.
    expect(retried).toMatchObject({ id: `a:${first.id}`, enqueuedAt: clock.now() });
    expect((await redelivered).delivery.attempts).toBe(1); // counting started again
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([first.id, first.id, second.id]);
    expect(a.received[1]?.json).toBe(JSON.stringify(first)); // the record was kept while dead
    expect(await outbox.list()).toEqual([]);
    expect(await outbox.retry('a:nope')).toBeUndefined();
  });

  it('reads a retried delivery back before its workers are woken, so one delivered at once is not reported missing', async () => {
    let reject = true;
    const first = change('students', 6, 'created');
    const a = scriptedConnector(() => (reject ? rejected() : { status: 'done' }));
    // The order of the outbox's calls to the store after the retry.
    const order: string[] = [];
    let watching = false;
    const wrap = (target: OutboxStore): OutboxStore => ({
      ...target,
      claim: (request) => {
        if (watching) order.push('claim');
        return target.claim(request);
      },
      get: (id) => {
        if (watching) order.push(`get ${id}`);
        return target.get(id);
      },
    });
    const { outbox } = await setup([{ name: 'a', connector: a.connector }], { engine, wrap });
    const dead = nextEvent(outbox, 'dead');
    await outbox.enqueue([first]);
    await dead;
    await outbox.whenIdle();
    reject = false;
    const redelivered = nextEvent(outbox, 'delivered');
    watching = true;
    expect(await outbox.retry(`a:${first.id}`)).toMatchObject({ id: `a:${first.id}`, status: 'pending' });
    await redelivered;
    watching = false;
    // Read once before the retry and once after it, both before the workers claim.
    expect(order.slice(0, 3)).toEqual([`get a:${first.id}`, `get a:${first.id}`, 'claim']);
  });

  it('answers a retry with the delivery as retried when it was delivered before it could be read back', async () => {
    let reject = true;
    const first = change('students', 7, 'created');
    const a = scriptedConnector(() => (reject ? rejected() : { status: 'done' }));
    let retriedAlready = false;
    const wrap = (target: OutboxStore): OutboxStore => ({
      ...target,
      retry: async (...args) => {
        const ids = await target.retry(...args);
        retriedAlready = true;
        return ids;
      },
      // As if a worker had delivered it between the retry and the read.
      get: (id) => (retriedAlready ? Promise.resolve(undefined) : target.get(id)),
    });
    const { outbox, clock } = await setup([{ name: 'a', connector: a.connector }], { engine, wrap });
    const dead = nextEvent(outbox, 'dead');
    await outbox.enqueue([first]);
    await dead;
    await outbox.whenIdle();
    reject = false;
    clock.advance(60_000);
    expect(await outbox.retry(`a:${first.id}`)).toMatchObject({ id: `a:${first.id}`, status: 'pending', attempts: 0, enqueuedAt: clock.now() });
    expect(await outbox.retry('a:nope')).toBeUndefined();
  });

  it('abandons a delivery that outlives its lease, aborting its signal, and delivers it again', async () => {
    const started = deferred<AbortSignal>();
    let calls = 0;
    const connector: Connector = {
      ...scriptedConnector().connector,
      async deliver(ctx, records) {
        calls++;
        if (calls > 1) return records.map(() => ({ status: 'done' as const }));
        started.resolve(ctx.signal);
        return new Promise(() => {}); // hangs
      },
    };
    const { outbox, clock } = await setup([{ name: 'a', connector }], { engine, leaseMs: 60_000 });
    const retry = nextEvent(outbox, 'retry');
    await outbox.enqueue([change('students', 1)]);
    const signal = await started.promise;
    clock.advance(59_999);
    expect(signal.aborted).toBe(false);
    clock.advance(1);
    expect((await retry).delivery.lastError).toMatch(/^outbox.lease_expired/);
    expect(signal.aborted).toBe(true);
    const delivered = nextEvent(outbox, 'delivered');
    clock.advance(1000);
    expect((await delivered).delivery).toMatchObject({ attempts: 2 });
    expect(calls).toBe(2);
    expect(await outbox.list()).toEqual([]);
  });

  it('stop waits for a batch in flight; the interrupted attempt is due again and not counted', async () => {
    const started = deferred();
    const connector: Connector = {
      ...scriptedConnector().connector,
      deliver: (ctx, records) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener('abort', () => resolve(records.map(() => retryable('aborted'))));
          started.resolve();
        }),
    };
    const { outbox, store, clock } = await setup([{ name: 'a', connector }], { engine });
    const s1 = change('students', 1);
    await outbox.enqueue([s1]);
    await started.promise;
    clock.advance(500);
    await outbox.stop();
    await outbox.stop();
    expect(await store.outbox.get(`a:${s1.id}`)).toMatchObject({ status: 'pending', attempts: 0, runAt: clock.now(), lastError: 'test.unavailable: aborted' });
  });

  it('does not poll the store while its only due delivery is in flight', async () => {
    const calls = new Map<string, number>();
    const gate = deferred();
    const started = deferred();
    const a = scriptedConnector(async () => {
      started.resolve();
      await gate.promise;
      return { status: 'done' };
    });
    const { outbox } = await setup([{ name: 'a', connector: a.connector }], { engine, wrap: counting(calls) });
    await outbox.enqueue([change('students', 1)]);
    await started.promise;
    const asked = () => (calls.get('claim') ?? 0) + (calls.get('nextRunAt') ?? 0);
    const before = asked();
    // Twenty answers of the store: time enough for a worker that polls to show it.
    for (let i = 0; i < 20; i++) await outbox.counts();
    const polled = asked() - before;
    gate.resolve();
    await outbox.whenIdle();
    expect(polled).toBeLessThanOrEqual(2);
    expect(a.delivered()).toHaveLength(1);
  });
});

describe('outbox', () => {
  it('plan writes nothing: what it returns is enqueued by the store transaction that carries it', async () => {
    const a = scriptedConnector();
    const { outbox, store } = await setup([{ name: 'a', connector: a.connector, streams: ['students'] }]);
    const s1 = change('students', 1);
    const planned = outbox.plan([s1, change('users', 2)], (r) => `{"id":${JSON.stringify(r.id)}}`);
    expect(planned).toEqual([{ id: s1.id, stream: 'students', orderKey: 'students:1', json: `{"id":${JSON.stringify(s1.id)}}`, connectors: ['a'] }]);
    outbox.notify();
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([]);
    expect(await outbox.list()).toEqual([]);
    await store.outbox.enqueue(planned);
    outbox.notify();
    await outbox.whenIdle();
    expect(a.received.map((r) => [r.id, r.json])).toEqual([[s1.id, `{"id":${JSON.stringify(s1.id)}}`]]);
  });

  it('enqueuing a record already queued does nothing', async () => {
    const a = scriptedConnector();
    const { outbox } = await setup([{ name: 'a', connector: a.connector }]);
    const s1 = change('students', 1);
    const hold = outbox.holdDeliveries();
    expect(await outbox.enqueue([s1, s1])).toBe(1);
    expect(await outbox.enqueue([s1])).toBe(0);
    hold();
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([s1.id]);
  });

  it('counts a delivery before it tells of it: a listener waiting for a count sees it reached', async () => {
    const a = scriptedConnector();
    const { outbox } = await setup([{ name: 'a', connector: a.connector }]);
    const seen: number[] = [];
    outbox.on('delivered', () => seen.push(outbox.deliveredCount()));
    await outbox.enqueue([change('students', 1), change('students', 2)]);
    await outbox.whenIdle();
    expect(seen.at(-1)).toBe(2);
  });
});
