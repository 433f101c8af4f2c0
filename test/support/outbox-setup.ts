import { onTestFinished } from 'vitest';
import { pino } from 'pino';
import { Agent } from 'undici';
import type { Connector } from '../../src/connectors/types.js';
import { BridgeError } from '../../src/errors.js';
import { createMetricsRegistry } from '../../src/metrics.js';
import { createOutbox } from '../../src/outbox/outbox.js';
import type { IntakeBusy } from '../../src/outbox/intake-first.js';
import type { AnyRecord } from '../../src/records.js';
import type { Claimed, OutboxStore, RoleStore, Store, StoreChange } from '../../src/store/index.js';
import { TEST_NOW_MS, testClock, type TestClock } from './clock.js';
import { testStore, type Engine } from './stores.js';

/** An outbox on a real store for the outbox's own tests: `setup` makes one, stopped after the test (with the store it made). */
export const log = pino({ level: 'silent' });
export const dispatcher = new Agent();
export const retryable = (msg = 'try later') => ({ status: 'retry' as const, error: new BridgeError('test.unavailable', msg, { retryable: true }) });
export const rejected = () => ({ status: 'dead' as const, error: new BridgeError('test.rejected', 'the receiver answered 400', { status: 400 }) });

export function deferred<T = void>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** The store's outbox, counting the calls made to it by method. */
export function counting(calls: Map<string, number>): (target: OutboxStore) => OutboxStore {
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

/**
 * The store's outbox with its first settlement held until a claim made after that settlement began
 * has come back (one that `until` accepts): the race of the claim a worker sends beside a
 * settlement (on PostgreSQL, on another connection) made certain. With `answerLate`, that claim's
 * answer reaches the worker only after the settlement and what follows it in the worker have run.
 * `calls` counts the methods called from that settlement on.
 */
export function settlementHeldForClaim(until: (claimed: Claimed[]) => boolean = () => true, options: { answerLate?: boolean } = {}) {
  let settling = false;
  const claimed = deferred();
  const settled = deferred();
  const calls = new Map<string, number>();
  const wrap = (target: OutboxStore): OutboxStore =>
    new Proxy(target, {
      get(object, prop, receiver) {
        const value: unknown = Reflect.get(object, prop, receiver);
        if (typeof value !== 'function') return value;
        if (settling) calls.set(String(prop), (calls.get(String(prop)) ?? 0) + 1);
        if (prop === 'claim') {
          return async (...args: Parameters<OutboxStore['claim']>) => {
            const result = await object.claim(...args);
            if (settling && until(result)) {
              claimed.resolve();
              if (options.answerLate) {
                await settled.promise;
                await new Promise((resolve) => setImmediate(resolve));
              }
            }
            return result;
          };
        }
        if (prop === 'settle') {
          return async (...args: Parameters<OutboxStore['settle']>) => {
            settling = true;
            await claimed.promise;
            try {
              return await object.settle(...args);
            } finally {
              settled.resolve();
            }
          };
        }
        return (value as (...a: unknown[]) => unknown).bind(object);
      },
    });
  return { wrap, calls };
}

/**
 * A store with `records` queued for the connector `name` by an outbox that delivered nothing, for
 * an outbox a test starts on it (`setup({ store })`): its first claim finds them due.
 */
export async function queuedBeforeStart(records: readonly AnyRecord[], name = 'a'): Promise<Store> {
  const filler = await setup([{ name, connector: NOTHING }]);
  filler.outbox.holdDeliveries();
  await filler.outbox.enqueue(records);
  await filler.outbox.stop();
  return filler.store;
}

const NOTHING: Connector = {
  type: 'nothing',
  configSchema: undefined as never,
  check: async () => ({ ok: true }),
  deliver: () => Promise.reject(new Error('a held outbox delivers nothing')),
};

export interface SetupOptions {
  engine?: Engine;
  clock?: TestClock;
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
  retryChunk?: number;
  /** How often the connectors' checks run (0: never, the default here). */
  checkIntervalMs?: number;
  /** The webhook intake the workers let go first while it is busy. */
  intake?: IntakeBusy;
}

export async function setup(connectors: { name: string; connector: Connector; streams?: string[]; config?: Record<string, unknown> }[], options: SetupOptions = {}) {
  // One clock for both: the store stamps enqueue times with it, the outbox claims what is due by it.
  const clock = options.clock ?? testClock(TEST_NOW_MS, { sleep: 'timers' });
  let store = options.store;
  if (!store) {
    const made = await testStore(options.engine ?? 'sqlite', { clock });
    onTestFinished(made.cleanup);
    store = made.store;
  }
  const metrics = createMetricsRegistry();
  const outbox = createOutbox({
    store: options.wrap ? options.wrap(store.outbox) : store.outbox,
    connectors: connectors.map(({ name, connector, streams = ['students', 'users', 'roster'], config }) => ({
      name,
      streams: streams as never,
      config: { ...config, name, type: connector.type, streams: streams as never },
      connector,
    })),
    delivery: { maxAgeHours: options.maxAgeHours ?? 72, backoff: { baseMs: 1000, maxMs: 60_000 }, concurrency: options.concurrency ?? 4 },
    clock,
    dispatcher,
    log,
    metrics,
    random: () => 0,
    checkIntervalMs: options.checkIntervalMs ?? 0,
    // The store's sweep returns expired leases too; kept out of the way so a test sees the worker's own lease timer.
    sweepIntervalMs: 24 * 3_600_000,
    ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
    ...(options.roles ? { roles: options.roles } : {}),
    ...(options.lingerMs ? { lingerMs: options.lingerMs } : {}),
    ...(options.retryChunk ? { retryChunk: options.retryChunk } : {}),
    ...(options.watch ? { watch: options.watch } : {}),
    ...(options.intake ? { intake: options.intake } : {}),
  });
  // Stopped after the test, before the store it made (the test's finish hooks run last first).
  onTestFinished(() => outbox.stop());
  await outbox.start();
  return { outbox, store, clock, metrics };
}
