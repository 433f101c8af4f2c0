import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { Agent } from 'undici';
import { createMetricsRegistry } from '../metrics.js';
import { BridgeError } from '../errors.js';
import type { OutboxStore, RoleStore, Store, StoreChange } from '../store/index.js';
import type { Connector } from '../connectors/types.js';
import { ManualClock, change, nextEvent, roster, scriptedConnector } from '../../test/outbox-helpers.js';
import { ENGINES, testStore, type Engine } from '../../test/support/stores.js';
import { createOutbox, type Outbox } from './outbox.js';

const log = pino({ level: 'silent' });
const dispatcher = new Agent();
const retryable = (msg = 'try later') => ({ status: 'retry' as const, error: new BridgeError('test.unavailable', msg, { retryable: true }) });
const rejected = () => ({ status: 'dead' as const, error: new BridgeError('test.rejected', 'the receiver answered 400', { status: 400 }) });

const outboxes: Outbox[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const outbox of outboxes.splice(0)) await outbox.stop();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** The store's outbox, counting the calls made to it by method. */
function counting(calls: Map<string, number>): (target: OutboxStore) => OutboxStore {
  return (target) =>
    new Proxy(target, {
      get(object, prop, receiver) {
        const value: unknown = Reflect.get(object, prop, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.set(String(prop), (calls.get(String(prop)) ?? 0) + 1);
          return (value as (...a: unknown[]) => unknown).apply(object, args);
        };
      },
    });
}

interface SetupOptions {
  engine?: Engine;
  clock?: ManualClock;
  /** Another outbox on a store a test opened already (a restart). */
  store?: Store;
  /** What the outbox is given in place of the store's own outbox (to watch its calls). */
  wrap?: (outbox: OutboxStore) => OutboxStore;
  maxAgeHours?: number;
  leaseMs?: number;
  concurrency?: number;
  roles?: RoleStore;
  watch?: (listener: (change: StoreChange) => void) => () => void;
  lingerMs?: number;
}

async function setup(connectors: { name: string; connector: Connector; streams?: string[] }[], options: SetupOptions = {}) {
  // One clock for both: the store stamps enqueue times with it, the outbox claims what is due by it.
  const clock = options.clock ?? new ManualClock();
  let store = options.store;
  if (!store) {
    const made = await testStore(options.engine ?? 'sqlite', { clock });
    cleanups.push(made.cleanup);
    store = made.store;
  }
  const metrics = createMetricsRegistry();
  const outbox = createOutbox({
    store: options.wrap ? options.wrap(store.outbox) : store.outbox,
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
    // The store's sweep returns expired leases too; kept out of the way so a test sees the worker's own lease timer.
    sweepIntervalMs: 24 * 3_600_000,
    ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
    ...(options.roles ? { roles: options.roles } : {}),
    ...(options.lingerMs ? { lingerMs: options.lingerMs } : {}),
    ...(options.watch ? { watch: options.watch } : {}),
  });
  outboxes.push(outbox);
  await outbox.start();
  return { outbox, store, clock, metrics };
}

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
    // A fresh retry window from now (the workers may have claimed it already by the time it is read).
    expect(retried).toMatchObject({ id: `a:${first.id}`, enqueuedAt: clock.now() });
    expect((await redelivered).delivery.attempts).toBe(1); // counting started again
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([first.id, first.id, second.id]);
    expect(a.received[1]?.json).toBe(JSON.stringify(first)); // the record was kept while dead
    expect(await outbox.list()).toEqual([]);
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

  it('holds new batches back while held (a batch in flight finishes), and delivers them once released', async () => {
    const gate = deferred();
    const started = deferred();
    const a = scriptedConnector(async () => {
      started.resolve();
      await gate.promise;
      return { status: 'done' };
    });
    const { outbox } = await setup([{ name: 'a', connector: a.connector }]);
    const s1 = change('students', 1);
    const s2 = change('students', 2);
    await outbox.enqueue([s1]);
    await started.promise;
    expect(a.calls).toEqual([[s1.id]]); // in flight
    const resume = outbox.holdDeliveries();
    const again = outbox.holdDeliveries();
    await outbox.enqueue([s2]);
    gate.resolve();
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([s1.id]); // the batch in flight finished; nothing new started
    expect((await outbox.counts()).get('a')).toEqual({ depth: 1, dead: 0 });
    resume();
    resume(); // releasing twice counts once: the other hold still stands
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([s1.id]);
    // The last release alone starts the held batch: awaited through the event, not whenIdle (which pumps by itself).
    const delivered = nextEvent(outbox, 'delivered', ({ delivery }) => delivery.recordId === s2.id);
    again();
    await delivered;
    expect(a.delivered()).toEqual([s1.id, s2.id]);
    expect((await outbox.counts()).get('a')).toBeUndefined();
  });

  it('runs no more batches at once than delivery.concurrency, nor than the connector allows', async () => {
    const gate = deferred();
    const full = deferred();
    const inFlight: Record<string, number> = { free: 0, single: 0 };
    const peaks: Record<string, number> = { free: 0, single: 0 };
    const measured = (name: string, maxConcurrency?: number) => {
      const base = scriptedConnector(async () => {
        inFlight[name]! += 1;
        peaks[name] = Math.max(peaks[name]!, inFlight[name]!);
        if (inFlight.free! >= 4 && inFlight.single! >= 1) full.resolve();
        await gate.promise;
        inFlight[name]! -= 1;
        return { status: 'done' };
      });
      const connector = maxConcurrency === undefined ? base.connector : { ...base.connector, maxConcurrency: () => maxConcurrency };
      return { connector, delivered: base.delivered };
    };
    const free = measured('free');
    const single = measured('single', 1);
    const { outbox } = await setup([
      { name: 'free', connector: free.connector },
      { name: 'single', connector: single.connector },
    ], { concurrency: 4 });
    await outbox.enqueue([1, 2, 3, 4, 5, 6, 7, 8].map((k) => change('students', k)));
    await full.promise;
    // A claim the worker started at the same moment would have been answered before this read (the
    // store answers in order), and its batch would have reached the connector: none did.
    await outbox.counts();
    expect(inFlight).toEqual({ free: 4, single: 1 });
    gate.resolve();
    await outbox.whenIdle();
    expect(peaks).toEqual({ free: 4, single: 1 });
    expect([free.delivered().length, single.delivered().length]).toEqual([8, 8]);
  });

  it('hands batches up to the batch size and applies per-record outcomes', async () => {
    const bad = change('students', 3);
    const a = scriptedConnector((r) => (r.id === bad.id ? rejected() : { status: 'done' }), 3);
    const { outbox } = await setup([{ name: 'a', connector: a.connector }], { concurrency: 1 });
    const records = [1, 2, 3, 4, 5, 6, 7].map((k) => (k === 3 ? bad : change('students', k)));
    await outbox.enqueue(records);
    await outbox.whenIdle();
    expect(a.calls).toEqual([records.slice(0, 3), records.slice(3, 6), records.slice(6)].map((batch) => batch.map((r) => r.id)));
    expect((await outbox.list()).map((d) => [d.recordId, d.status])).toEqual([[bad.id, 'dead']]);
    expect((await outbox.counts()).get('a')).toEqual({ depth: 0, dead: 1 });
  });

  it('retryAllDead puts every dead delivery back, of one connector or of all', async () => {
    let reject = true;
    const a = scriptedConnector(() => (reject ? rejected() : { status: 'done' }));
    const b = scriptedConnector(() => (reject ? rejected() : { status: 'done' }));
    const { outbox } = await setup([{ name: 'a', connector: a.connector }, { name: 'b', connector: b.connector, streams: ['users'] }]);
    const u2 = change('users', 2);
    await outbox.enqueue([change('students', 1), u2]);
    await outbox.whenIdle();
    expect(Object.fromEntries(await outbox.counts())).toEqual({ a: { depth: 0, dead: 2 }, b: { depth: 0, dead: 1 } });
    reject = false;
    expect(await outbox.retryAllDead('b')).toEqual([`b:${u2.id}`]);
    await outbox.whenIdle();
    expect(Object.fromEntries(await outbox.counts())).toEqual({ a: { depth: 0, dead: 2 } });
    expect(await outbox.retryAllDead()).toHaveLength(2);
    await outbox.whenIdle();
    expect(await outbox.counts()).toEqual(new Map());
    expect([a.delivered().length, b.delivered().length]).toEqual([4, 2]);
  });

  it('keeps its depth and dead counts equal to the deliveries it lists: deaths, retries by hand, a restart', async () => {
    let reject = true;
    const a = scriptedConnector((r) => (reject && Number(r.id.split(':')[1]) % 2 === 0 ? rejected() : { status: 'done' }));
    const b = scriptedConnector(() => retryable()); // never delivered: pending, retried later
    const connectors = [{ name: 'a', connector: a.connector }, { name: 'b', connector: b.connector, streams: ['users'] }];
    const first = await setup(connectors);
    const check = async (outbox: Outbox) => {
      const listed = await outbox.list();
      const summaries = await outbox.connectors();
      for (const name of ['a', 'b']) {
        const mine = listed.filter((d) => d.connector === name);
        const recount = { depth: mine.filter((d) => d.status !== 'dead').length, dead: mine.filter((d) => d.status === 'dead').length };
        const summary = summaries.find((s) => s.name === name);
        expect([name, summary?.depth, summary?.dead]).toEqual([name, recount.depth, recount.dead]);
      }
    };
    const dead = async (outbox: Outbox) => (await outbox.connectors()).reduce((sum, c) => sum + c.dead, 0);
    const records = [1, 2, 3, 4, 5, 6].map((k) => change('students', k)).concat([change('users', 7), change('users', 8)]);
    await first.outbox.enqueue(records);
    await first.outbox.whenIdle();
    expect((await first.outbox.connectors()).map((c) => [c.name, c.depth, c.dead])).toEqual([['a', 0, 4], ['b', 2, 0]]); // students 2, 4, 6 and users 8
    await check(first.outbox);
    reject = false;
    // Held, so that the two reads of a check see the same state.
    const release = first.outbox.holdDeliveries();
    expect(await first.outbox.retry(`a:${records[1]!.id}`)).toMatchObject({ status: 'pending' });
    await check(first.outbox); // pending again, before its delivery
    release();
    await first.outbox.whenIdle();
    await check(first.outbox);
    expect(await dead(first.outbox)).toBe(3);
    await first.outbox.stop();
    const second = await setup(connectors, { store: first.store, clock: first.clock });
    await check(second.outbox);
    expect(await dead(second.outbox)).toBe(3);
    const resume = second.outbox.holdDeliveries();
    await second.outbox.retryAllDead('a');
    await check(second.outbox);
    resume();
    await second.outbox.whenIdle();
    await check(second.outbox);
    expect((await second.outbox.connectors()).map((c) => [c.name, c.depth, c.dead])).toEqual([['a', 0, 0], ['b', 2, 0]]);
  });

  it('honours the retry delay a connector reports (Retry-After)', async () => {
    const a = scriptedConnector((_r, attempt) => (attempt === 1 ? { ...retryable('429'), retryAfterMs: 30_000 } : { status: 'done' }));
    const { outbox, clock } = await setup([{ name: 'a', connector: a.connector }]);
    const s1 = change('students', 1);
    const retry = nextEvent(outbox, 'retry');
    await outbox.enqueue([s1]);
    expect((await retry).delivery.runAt).toBe(clock.now() + 30_000);
    clock.advance(29_999);
    await outbox.whenIdle();
    expect(a.delivered()).toHaveLength(1);
    const delivered = nextEvent(outbox, 'delivered');
    clock.advance(1);
    await delivered;
    expect(a.delivered()).toEqual([s1.id, s1.id]);
  });

  it('serves a connector one replica at a time holds only while this replica holds its role', async () => {
    let holder: string | undefined = 'another replica';
    const asked: string[] = [];
    const roles: RoleStore = {
      async acquire(role) {
        asked.push(`acquire ${role}`);
        holder ??= 'me';
        return holder === 'me' ? 7 : undefined;
      },
      async release(role) {
        asked.push(`release ${role}`);
        if (holder === 'me') holder = undefined;
      },
      claimTick: async () => true,
      holdings: async () => ({ roles: [], ticks: [] }),
    };
    let notice: ((change: StoreChange) => void) | undefined;
    const cacheSeen: number[] = [];
    const a = scriptedConnector();
    const exclusive: Connector = {
      ...a.connector,
      exclusive: () => true,
      async deliver(ctx, records) {
        cacheSeen.push(ctx.cache.size);
        ctx.cache.set('ids', records.map((r) => r.id));
        return a.connector.deliver(ctx, records);
      },
    };
    const { outbox, clock } = await setup([{ name: 'files', connector: exclusive }], {
      roles,
      watch: (listener) => {
        notice = listener;
        return () => (notice = undefined);
      },
    });
    const s1 = change('students', 1);
    await outbox.enqueue([s1]);
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([]);
    expect(asked).toEqual(['acquire connector:files']);
    // The other replica gives the role up and says so: this one takes it and delivers.
    holder = undefined;
    const delivered = nextEvent(outbox, 'delivered');
    notice!('roles');
    await delivered;
    expect(a.delivered()).toEqual([s1.id]);
    expect(cacheSeen).toEqual([0]);
    // It loses the role (its heartbeat stopped, say) and takes it again later: its cache starts afresh.
    holder = 'another replica';
    clock.advance(2_001);
    const s2 = change('students', 2);
    await outbox.enqueue([s2]);
    await outbox.whenIdle();
    expect(a.delivered()).toEqual([s1.id]);
    holder = undefined;
    const again = nextEvent(outbox, 'delivered');
    notice!('roles');
    await again;
    expect(a.delivered()).toEqual([s1.id, s2.id]);
    expect(cacheSeen).toEqual([0, 0]);
    await outbox.stop();
    expect(asked.at(-1)).toBe('release connector:files');
    expect(holder).toBeUndefined();
  });

  it('gathers what arrives while it lingers after emptying its queue into one batch', async () => {
    const a = scriptedConnector(undefined, 100);
    const { outbox } = await setup([{ name: 'a', connector: a.connector }], { lingerMs: 1000 });
    const first = change('students', 1);
    const delivered = nextEvent(outbox, 'delivered');
    await outbox.enqueue([first]);
    await delivered;
    // The queue is empty now: the next records, enqueued one by one, wait for each other.
    const later = [2, 3, 4, 5].map((n) => change('students', n));
    for (const record of later) await outbox.enqueue([record]);
    await outbox.whenIdle();
    expect(a.calls).toEqual([[first.id], later.map((r) => r.id)]);
  });

  it('a delivery failing past maxAgeHours ends dead', async () => {
    const a = scriptedConnector(() => retryable());
    const { outbox, clock } = await setup([{ name: 'a', connector: a.connector }], { maxAgeHours: 0.001 }); // 3.6 s
    let died: string | undefined;
    outbox.on('dead', ({ delivery }) => (died = delivery.lastError));
    await outbox.enqueue([change('students', 1)]);
    for (let i = 0; i < 10 && died === undefined; i++) {
      await outbox.whenIdle();
      clock.advance(1000);
    }
    await outbox.whenIdle();
    // Attempts at 0, 1 s and 3 s, the last one at the 3.6 s deadline: then dead.
    expect(died).toBe('expired after 4 attempts; last error: test.unavailable: try later');
    expect(a.delivered()).toHaveLength(4);
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
    expect((await outbox.list()).map((d) => d.lastError)).toEqual(['outbox.deliver_failed: boom', 'outbox.deliver_failed: boom']);
    mode = 'short';
    clock.advance(1000);
    await outbox.whenIdle();
    expect((await outbox.list()).map((d) => [d.status, d.lastError?.slice(0, 19)])).toEqual([['pending', 'outbox.bad_outcomes'], ['pending', 'outbox.bad_outcomes']]);
    mode = 'ok';
    clock.advance(2000);
    await outbox.whenIdle();
    expect(await outbox.list()).toEqual([]);
  });

  it('keeps a record until every connector is done with it', async () => {
    let bFails = true;
    const a = scriptedConnector();
    const b = scriptedConnector(() => (bFails ? retryable() : { status: 'done' }));
    const { outbox, clock } = await setup([
      { name: 'a', connector: a.connector },
      { name: 'b', connector: b.connector },
    ]);
    const s1 = change('students', 1);
    await outbox.enqueue([s1]);
    await outbox.whenIdle();
    expect((await outbox.list()).map((d) => [d.id, d.status])).toEqual([[`b:${s1.id}`, 'pending']]); // a's is done
    bFails = false;
    const delivered = nextEvent(outbox, 'delivered');
    clock.advance(1000);
    // Had the record gone with a's delivery, b's retry would have had nothing to send (dead: record missing).
    expect((await delivered).delivery).toMatchObject({ id: `b:${s1.id}`, attempts: 2 });
    expect(b.received.map((r) => r.json)).toEqual([JSON.stringify(s1), JSON.stringify(s1)]);
    expect(await outbox.list()).toEqual([]);
  });

  it('reports queue depth, dead count and deliveries in its metrics', async () => {
    // Batches of 10: the three go in one, so per-batch counting must still count each delivery.
    const a = scriptedConnector((r) => (r.stream === 'users' ? rejected() : { status: 'done' }), 10);
    const b = scriptedConnector(() => retryable());
    const { outbox, metrics } = await setup([{ name: 'a', connector: a.connector }, { name: 'b', connector: b.connector, streams: ['roster'] }]);
    await outbox.enqueue([change('students', 1), change('users', 2), roster('2026-11-22')]);
    await outbox.whenIdle();
    const text = await metrics.metrics();
    expect(text).toContain('schoolbridge_outbox_depth{connector="a"} 0');
    expect(text).toContain('schoolbridge_outbox_dead{connector="a"} 1');
    expect(text).toContain('schoolbridge_outbox_depth{connector="b"} 1');
    expect(text).toContain('schoolbridge_deliveries_total{connector="a",outcome="done"} 2');
    expect(text).toContain('schoolbridge_deliveries_total{connector="a",outcome="dead"} 1');
    expect(text).toContain('schoolbridge_deliveries_total{connector="b",outcome="retry"} 1');
    expect(a.calls).toHaveLength(1);
    expect(text).toMatch(/schoolbridge_delivery_duration_seconds_count\{connector="a"\} 1\n/);
    expect(text).toMatch(/schoolbridge_delivery_lag_seconds_count\{connector="a"\} 2\n/);
  });

  it('asks the store a bounded number of questions per delivery, whatever the backlog', async () => {
    const calls = new Map<string, number>();
    const a = scriptedConnector(() => retryable());
    const { outbox } = await setup([{ name: 'a', connector: a.connector }], { wrap: counting(calls) });
    const backlog = Array.from({ length: 400 }, (_, i) => change('students', i + 1));
    await outbox.enqueue(backlog);
    await outbox.whenIdle();
    expect(a.delivered()).toHaveLength(400);
    // One claim and one settle per batch, plus a few looks at when the next one is due; no scans.
    expect(calls.get('settle')).toBe(400);
    expect(calls.get('claim')).toBeLessThan(400 + 20);
    expect(calls.get('nextRunAt') ?? 0).toBeLessThan(20);
    expect([calls.get('list'), calls.get('get')]).toEqual([undefined, undefined]);
  });
});
