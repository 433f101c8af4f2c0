import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { Agent } from 'undici';
import { createMetricsRegistry } from '../metrics.js';
import { BridgeError } from '../errors.js';
import { createStore, type Store } from '../store/index.js';
import type { Connector } from '../connectors/types.js';
import { ManualClock, change, nextEvent, roster, scriptedConnector } from '../../test/outbox-helpers.js';
import { createOutbox, type Outbox } from './outbox.js';
import { DELIVERED, ENTRIES, RECORDS, type OutboxEntry } from './entry.js';

const log = pino({ level: 'silent' });
const dispatcher = new Agent();
const retryable = (msg = 'try later') => ({ status: 'retry' as const, error: new BridgeError('test.unavailable', msg, { retryable: true }) });
const rejected = () => ({ status: 'dead' as const, error: new BridgeError('test.rejected', 'the receiver answered 400', { status: 400 }) });

const running: { outbox: Outbox; store: Store }[] = [];
afterEach(async () => {
  for (const { outbox, store } of running.splice(0)) {
    await outbox.stop();
    await store.stop();
  }
});

async function setup(
  connectors: { name: string; connector: Connector; streams?: string[] }[],
  options: { clock?: ManualClock; store?: Store; maxAgeHours?: number; leaseMs?: number; concurrency?: number } = {},
) {
  const clock = options.clock ?? new ManualClock();
  const store = options.store ?? createStore({ log });
  await store.start();
  const metrics = createMetricsRegistry();
  const outbox = createOutbox({
    store,
    connectors: connectors.map(({ name, connector, streams = ['students', 'users', 'roster'] }) => ({
      name,
      streams: streams as never,
      config: { name, type: connector.type, streams: streams as never },
      connector,
    })),
    delivery: { maxAgeHours: options.maxAgeHours ?? 72, backoff: { baseMs: 1000, maxMs: 60_000 }, concurrency: options.concurrency ?? 4 },
    clock,
    dispatcher,
    log,
    metrics,
    random: () => 0,
    checkIntervalMs: 0,
    ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
  });
  running.push({ outbox, store });
  await outbox.start();
  return { outbox, store, clock, metrics };
}

describe('outbox', () => {
  it('delivers every record once to every connector subscribed to its stream', async () => {
    const a = scriptedConnector();
    const b = scriptedConnector();
    const { outbox, store } = await setup([
      { name: 'a', connector: a.connector, streams: ['students'] },
      { name: 'b', connector: b.connector, streams: ['students', 'users'] },
    ]);
    const s1 = change('students', 1);
    const u1 = change('users', 7);
    expect(await outbox.enqueue([s1, u1])).toBe(3);
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([s1.id]);
    expect(b.delivered().sort()).toEqual([s1.id, u1.id].sort());
    expect(store.size(ENTRIES)).toBe(0);
    expect(store.size(RECORDS)).toBe(0);
    expect(store.size(DELIVERED)).toBe(3);
  });

  it('holds new batches back while held (a batch in flight finishes), and delivers them once released', async () => {
    let finish: () => void = () => {};
    const gate = new Promise<void>((resolve) => (finish = resolve));
    const a = scriptedConnector(async () => {
      await gate;
      return { status: 'done' };
    });
    const { outbox } = await setup([{ name: 'a', connector: a.connector }]);
    const s1 = change('students', 1);
    const s2 = change('students', 2);
    await outbox.enqueue([s1]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(a.calls).toEqual([[s1.id]]); // in flight
    const resume = outbox.holdDeliveries();
    const again = outbox.holdDeliveries();
    await outbox.enqueue([s2]);
    finish();
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([s1.id]); // the batch in flight finished; nothing new started
    expect(outbox.depth('a')).toBe(1);
    resume();
    resume(); // releasing twice counts once: the other hold still stands
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([s1.id]);
    // The last release alone starts the held batch: awaited through the event, not whenIdle (which pumps by itself).
    const delivered = new Promise<void>((resolve) => outbox.on('delivered', ({ entry }) => entry.key === s2.id && resolve()));
    again();
    await delivered;
    expect(a.delivered()).toEqual([s1.id, s2.id]);
    expect(outbox.depth('a')).toBe(0);
  });

  it('enqueuing a record again does nothing, queued or already delivered', async () => {
    const a = scriptedConnector();
    const { outbox } = await setup([{ name: 'a', connector: a.connector }]);
    const s1 = change('students', 1);
    expect(outbox.enqueueOps([s1, s1])).toHaveLength(2); // one entry, one record
    await Promise.resolve(); // not committed: forgotten once the tick is over
    expect(await outbox.enqueue([s1])).toBe(1);
    expect(await outbox.enqueue([s1])).toBe(0);
    await outbox.whenIdle();
    expect(await outbox.enqueue([s1])).toBe(0);
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([s1.id]);
  });

  it('keeps per-key order while a failing key holds back only itself', async () => {
    const failing = new Set<string>();
    const a = scriptedConnector((r) => (failing.has(r.id) ? retryable() : { status: 'done' }));
    const { outbox, clock } = await setup([{ name: 'a', connector: a.connector }], { concurrency: 1 });
    const create1 = change('students', 1, 'created');
    const create2 = change('students', 2, 'created');
    const update1 = change('students', 1, 'updated');
    const update2 = change('students', 2, 'updated');
    const update1b = change('students', 1, 'updated');
    failing.add(create1.id);
    await outbox.enqueue([create1, create2, update1, update2, update1b]);
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([create1.id, create2.id, update2.id]);
    expect(outbox.get(`a:${create1.id}`)).toMatchObject({ status: 'pending', attempts: 1, runAt: clock.now() + 1000 });
    expect(outbox.list({ state: 'pending' }).map((e) => [e.key, e.waitingFor])).toEqual([
      [create1.id, undefined],
      [update1.id, `a:${create1.id}`],
      [update1b.id, `a:${create1.id}`],
    ]);

    failing.clear();
    const last = nextEvent(outbox, 'delivered', (p) => p.entry.key === update1b.id);
    clock.advance(1000);
    await last;
    expect(a.delivered().slice(3)).toEqual([create1.id, update1.id, update1b.id]);
  });

  it('runs no more batches at once than delivery.concurrency, nor than the connector allows', async () => {
    const peaks: Record<string, number> = {};
    const measured = (name: string, maxConcurrency?: number): Connector => {
      let inFlight = 0;
      const base = scriptedConnector(async () => {
        inFlight++;
        peaks[name] = Math.max(peaks[name] ?? 0, inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight--;
        return { status: 'done' };
      }).connector;
      return maxConcurrency === undefined ? base : { ...base, maxConcurrency: () => maxConcurrency };
    };
    const { outbox } = await setup([
      { name: 'free', connector: measured('free') },
      { name: 'single', connector: measured('single', 1) },
    ], { concurrency: 4 });
    await outbox.enqueue([1, 2, 3, 4, 5, 6, 7, 8].map((k) => change('students', k)));
    await outbox.whenIdle();
    expect(peaks).toEqual({ free: 4, single: 1 });
  });

  it('hands batches up to the batch size and applies per-record outcomes', async () => {
    const bad = change('students', 3);
    const a = scriptedConnector((r) => (r.id === bad.id ? rejected() : { status: 'done' }), 3);
    const { outbox } = await setup([{ name: 'a', connector: a.connector }], { concurrency: 1 });
    const records = [1, 2, 3, 4, 5, 6, 7].map((k) => (k === 3 ? bad : change('students', k)));
    await outbox.enqueue(records);
    await outbox.whenIdle();
    expect(a.calls.map((c) => c.length)).toEqual([3, 3, 1]);
    expect(outbox.list().map((e) => [e.key, e.status])).toEqual([[bad.id, 'dead']]);
    expect(outbox.deadCount()).toBe(1);
    expect(outbox.depth()).toBe(0);
  });

  it('a 4xx is dead at once, keeps its record and blocks its key until retried by hand', async () => {
    let reject = true;
    const a = scriptedConnector((r, attempt) => (reject && attempt === 1 && r.id.endsWith('1') ? rejected() : { status: 'done' }));
    const { outbox, store } = await setup([{ name: 'a', connector: a.connector }]);
    const first = { ...change('students', 5, 'created'), id: 'students:5:created-1' };
    const second = change('students', 5, 'updated');
    const dead = nextEvent(outbox, 'dead');
    await outbox.enqueue([first, second]);
    expect((await dead).entry).toMatchObject({ id: `a:${first.id}`, status: 'dead', attempts: 1, lastError: 'test.rejected: the receiver answered 400' });
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([first.id]);
    expect(store.get(RECORDS, first.id)).toEqual(first);

    reject = false;
    const retried = await outbox.retry(`a:${first.id}`);
    expect(retried).toMatchObject({ status: 'pending', attempts: 0 });
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([first.id, first.id, second.id]);
    expect(outbox.list()).toEqual([]);
    expect(await outbox.retry('a:nope')).toBeUndefined();
  });

  it('retryAllDead puts every dead entry back', async () => {
    let reject = true;
    const a = scriptedConnector(() => (reject ? rejected() : { status: 'done' }));
    const { outbox } = await setup([{ name: 'a', connector: a.connector }]);
    await outbox.enqueue([change('students', 1), change('users', 2)]);
    await outbox.whenIdle();
    expect(outbox.deadCount()).toBe(2);
    reject = false;
    expect(await outbox.retryAllDead()).toHaveLength(2);
    await outbox.whenIdle();
    expect(outbox.deadCount()).toBe(0);
    expect(a.delivered()).toHaveLength(4);
  });

  it('keeps its depth and dead counts equal to the entries it lists: deaths, retries by hand, a restart', async () => {
    let reject = true;
    const a = scriptedConnector((r) => (reject && Number(r.id.split(':')[1]) % 2 === 0 ? rejected() : { status: 'done' }));
    const b = scriptedConnector(() => retryable()); // never delivered: pending, retried later
    const connectors = [{ name: 'a', connector: a.connector }, { name: 'b', connector: b.connector, streams: ['users'] }];
    const first = await setup(connectors);
    const check = (outbox: Outbox) => {
      for (const connector of [undefined, 'a', 'b']) {
        const listed = outbox.list().filter((e) => connector === undefined || e.connector === connector);
        const recount = { depth: listed.filter((e) => e.status !== 'dead').length, dead: listed.filter((e) => e.status === 'dead').length };
        expect([connector, outbox.depth(connector), outbox.deadCount(connector)]).toEqual([connector, recount.depth, recount.dead]);
      }
    };
    const records = [1, 2, 3, 4, 5, 6].map((k) => change('students', k)).concat([change('users', 7), change('users', 8)]);
    await first.outbox.enqueue(records);
    await first.outbox.whenIdle();
    expect([first.outbox.deadCount('a'), first.outbox.depth('b')]).toEqual([4, 2]); // students 2, 4, 6 and users 8
    check(first.outbox);
    reject = false;
    expect(await first.outbox.retry(`a:${records[1]!.id}`)).toMatchObject({ status: 'pending' });
    check(first.outbox); // pending again, before its delivery
    await first.outbox.whenIdle();
    check(first.outbox);
    expect(first.outbox.deadCount('a')).toBe(3);
    await first.outbox.stop();
    const second = await setup(connectors, { store: first.store, clock: first.clock });
    check(second.outbox);
    expect(second.outbox.deadCount()).toBe(3);
    await second.outbox.retryAllDead('a');
    check(second.outbox);
    await second.outbox.whenIdle();
    check(second.outbox);
    expect([second.outbox.deadCount(), second.outbox.depth()]).toEqual([0, 2]);
  });

  it('honours the retry delay a connector reports (Retry-After)', async () => {
    const a = scriptedConnector((_r, attempt) => (attempt === 1 ? { ...retryable('429'), retryAfterMs: 30_000 } : { status: 'done' }));
    const { outbox, clock } = await setup([{ name: 'a', connector: a.connector }]);
    const s1 = change('students', 1);
    const retry = nextEvent(outbox, 'retry');
    await outbox.enqueue([s1]);
    expect((await retry).entry.runAt).toBe(clock.now() + 30_000);
    clock.advance(29_999);
    await outbox.whenIdle();
    expect(a.delivered()).toHaveLength(1);
    const delivered = nextEvent(outbox, 'delivered');
    clock.advance(1);
    await delivered;
    expect(a.delivered()).toEqual([s1.id, s1.id]);
  });

  it('a delivery failing past maxAgeHours ends dead', async () => {
    const a = scriptedConnector(() => retryable());
    const { outbox, clock } = await setup([{ name: 'a', connector: a.connector }], { maxAgeHours: 0.001 }); // 3.6 s
    const dead = nextEvent(outbox, 'dead');
    await outbox.enqueue([change('students', 1)]);
    for (let i = 0; i < 10 && outbox.deadCount() === 0; i++) {
      await outbox.whenIdle();
      clock.advance(1000);
    }
    expect((await dead).entry.lastError).toMatch(/^expired after \d+ attempts; last error: test.unavailable/);
    expect(a.delivered().length).toBeGreaterThan(2);
  });

  it('a throwing connector or a wrong number of outcomes retries the whole batch', async () => {
    let mode: 'throw' | 'short' | 'ok' = 'throw';
    const connector: Connector = {
      ...scriptedConnector().connector,
      batchSize: () => 10,
      async deliver(_ctx, records) {
        if (mode === 'throw') throw new Error('boom');
        if (mode === 'short') return [{ status: 'done' }];
        return records.map(() => ({ status: 'done' as const }));
      },
    };
    const { outbox, clock } = await setup([{ name: 'a', connector }]);
    await outbox.enqueue([change('students', 1), change('students', 2)]);
    await outbox.whenIdle();
    expect(outbox.list().map((e) => e.lastError)).toEqual(['outbox.deliver_failed: boom', 'outbox.deliver_failed: boom']);
    mode = 'short';
    clock.advance(1000);
    await outbox.whenIdle();
    expect(outbox.list().map((e) => e.lastError?.slice(0, 19))).toEqual(['outbox.bad_outcomes', 'outbox.bad_outcomes']);
    mode = 'ok';
    clock.advance(2000);
    await outbox.whenIdle();
    expect(outbox.list()).toEqual([]);
  });

  it('abandons a delivery that outlives its lease, aborting its signal', async () => {
    let signal: AbortSignal | undefined;
    let calls = 0;
    const connector: Connector = {
      ...scriptedConnector().connector,
      async deliver(ctx, records) {
        calls++;
        if (calls > 1) return records.map(() => ({ status: 'done' as const }));
        signal = ctx.signal;
        return new Promise(() => {}); // hangs
      },
    };
    const { outbox, clock } = await setup([{ name: 'a', connector }], { leaseMs: 60_000 });
    const retry = nextEvent(outbox, 'retry');
    await outbox.enqueue([change('students', 1)]);
    await Promise.resolve();
    expect(outbox.list()[0]?.status).toBe('active');
    clock.advance(60_000);
    expect((await retry).entry.lastError).toMatch(/^outbox.lease_expired/);
    expect(signal?.aborted).toBe(true);
    clock.advance(1000);
    await outbox.whenIdle();
    expect(calls).toBe(2);
    expect(outbox.list()).toEqual([]);
  });

  it('at start-up, reclaims entries a crash left active and drops orphaned records', async () => {
    const store = createStore({ log });
    await store.start();
    const s1 = change('students', 1);
    const leftActive: OutboxEntry = {
      id: `a:${s1.id}`, connector: 'a', key: s1.id, stream: 'students', order: 'students:1', seq: 41,
      status: 'active', enqueuedAt: 0, runAt: 0, attempts: 1, leaseUntil: Date.parse('2030-01-01'),
    };
    await store.commit([
      { op: 'put', c: ENTRIES, k: leftActive.id, v: leftActive },
      { op: 'put', c: RECORDS, k: s1.id, v: s1 },
      { op: 'put', c: RECORDS, k: 'orphan', v: change('users', 9) },
    ]);
    const a = scriptedConnector();
    const { outbox } = await setup([{ name: 'a', connector: a.connector }], { store });
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([s1.id]);
    expect(store.size(RECORDS)).toBe(0);
    await outbox.enqueue([change('students', 2)]);
    expect(outbox.list()[0]?.seq ?? 42).toBeGreaterThanOrEqual(42);
  });

  it('forgets entries whose enqueue ops were never committed', async () => {
    const a = scriptedConnector();
    const { outbox, store } = await setup([{ name: 'a', connector: a.connector }]);
    const ops = outbox.enqueueOps([change('students', 1)]);
    expect(ops).toHaveLength(2);
    outbox.notify();
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([]);
    expect(outbox.depth()).toBe(0);
    expect(store.size(ENTRIES)).toBe(0);
  });

  it('a record stays stored until every connector is done with it', async () => {
    let bFails = true;
    const a = scriptedConnector();
    const b = scriptedConnector(() => (bFails ? retryable() : { status: 'done' }));
    const { outbox, store, clock } = await setup([
      { name: 'a', connector: a.connector },
      { name: 'b', connector: b.connector },
    ]);
    const s1 = change('students', 1);
    await outbox.enqueue([s1]);
    await outbox.whenIdle();
    expect(store.get(RECORDS, s1.id)).toEqual(s1);
    bFails = false;
    clock.advance(1000);
    await outbox.whenIdle();
    expect(store.has(RECORDS, s1.id)).toBe(false);
  });

  it('stop waits for deliveries in flight; an interrupted attempt is due again and not counted', async () => {
    let release: (() => void) | undefined;
    const connector: Connector = {
      ...scriptedConnector().connector,
      deliver: (ctx, records) =>
        new Promise((resolve) => {
          release = () => resolve(records.map(() => retryable('aborted')));
          ctx.signal.addEventListener('abort', () => release!());
        }),
    };
    const { outbox, store, clock } = await setup([{ name: 'a', connector }]);
    const s1 = change('students', 1);
    await outbox.enqueue([s1]);
    await Promise.resolve();
    expect(release).toBeDefined();
    await outbox.stop();
    await outbox.stop();
    expect(store.get<OutboxEntry>(ENTRIES, `a:${s1.id}`)).toMatchObject({ status: 'pending', attempts: 0, runAt: clock.now() });
  });

  it('reports queue depth, dead count and deliveries in its metrics', async () => {
    // Batches of 10: the three go in one, so per-batch counting must still count each delivery.
    const a = scriptedConnector((r) => (r.stream === 'users' ? rejected() : { status: 'done' }), 10);
    const { outbox, metrics } = await setup([{ name: 'a', connector: a.connector }]);
    await outbox.enqueue([change('students', 1), change('users', 2), roster('2026-11-22')]);
    await outbox.whenIdle();
    const text = await metrics.metrics();
    expect(text).toContain('schoolbridge_outbox_depth{connector="a"} 0');
    expect(text).toContain('schoolbridge_outbox_dead{connector="a"} 1');
    expect(text).toContain('schoolbridge_deliveries_total{connector="a",outcome="done"} 2');
    expect(text).toContain('schoolbridge_deliveries_total{connector="a",outcome="dead"} 1');
    expect(a.calls).toHaveLength(1);
    expect(text).toMatch(/schoolbridge_delivery_duration_seconds_count\{connector="a"\} 1/);
  });

  it('scheduling work grows with the deliveries, not with the backlog times the deliveries', async () => {
    const store = createStore({ log });
    let reads = 0;
    const counting = new Proxy(store, {
      get(target, prop, receiver) {
        if (prop === 'get') return (c: string, k: string) => (reads++, target.get(c, k));
        return Reflect.get(target, prop, receiver);
      },
    });
    const a = scriptedConnector(() => retryable());
    const { outbox } = await setup([{ name: 'a', connector: a.connector }], { store: counting });
    const backlog = Array.from({ length: 3000 }, (_, i) => change('students', i + 1));
    await outbox.enqueue(backlog);
    await outbox.whenIdle();
    expect(a.delivered()).toHaveLength(3000);
    // A scan of every head per attempt would read ~4.5 million entries here.
    expect(reads).toBeLessThan(20 * 3000);
  });
});
