import type { Dispatcher } from 'undici';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import { releaseCache } from '../connectors/cache.js';
import type { ConnectorContext } from '../connectors/types.js';
import type { UserDirectory } from '../connectors/user-directory.js';
import { BridgeError, describeError } from '../errors.js';
import type { Component } from '../lifecycle.js';
import type { ReadinessState } from '../readiness.js';
import type { AnyRecord, Stream } from '../records.js';
import type { Delivery, DeliveryFilter, Enqueue, ListedDelivery, OutboxCounts, OutboxStore, RoleStore, StatePatch, StoreChange } from '../store/index.js';
import { ofDeliveryId } from '../store/index.js';
import { createLocalRoles } from '../store/local-roles.js';
import { createConnectorChecks } from './connector-checks.js';
import { owedOfRanges, type OwedRange } from './owed-ranges.js';
import type { ConnectorInstance } from './connector-instance.js';
import { OutboxEvents, type OutboxEvent, type OutboxEventPayload } from './events.js';
import { waitIdle, withTimeout } from './idle.js';
import type { IntakeBusy } from './intake-first.js';
import { createOutboxMetrics } from './outbox-metrics.js';
import type { RetryPolicy } from './retry-policy.js';
import { reportSettled } from './settled.js';
import { ConnectorWorker, type WorkerHost } from './worker.js';

export interface OutboxOptions {
  store: OutboxStore;
  /** Where an exclusive connector's role is held (default: this process holds every role). */
  roles?: RoleStore;
  /** What other replicas changed (Store.watch): their deliveries due, their roles given up. */
  watch?: (listener: (change: StoreChange) => void) => () => void;
  connectors: readonly ConnectorInstance[];
  delivery: { maxAgeHours: number; backoff: { baseMs: number; maxMs: number }; concurrency?: number };
  clock: Clock;
  dispatcher: Dispatcher;
  log: Logger;
  metrics: Registry;
  random?: () => number;
  /** How long a delivery may take before it is abandoned and retried (default 10 min). */
  leaseMs?: number;
  /** Returns leases that ran out, or whose replica stopped, this often (default 10 s). */
  sweepIntervalMs?: number;
  /** Connector checks for /readyz this often; 0 runs none (one-shot commands). Default 60 s. */
  checkIntervalMs?: number;
  /** How long stop() waits for deliveries in flight (default 5 s). */
  stopTimeoutMs?: number;
  /** How long a worker that emptied its queue waits before it claims again (WorkerHost.lingerMs; default 0). */
  lingerMs?: number;
  /** Deliveries retried by hand per transaction, and dead ones read per store call (default RETRY_CHUNK). */
  retryChunk?: number;
  /** The polled users, for connectors that name people (ConnectorContext.users). */
  users?: UserDirectory;
  /** Whether this replica's leases still stand (Store.leasesStand; default: always). */
  leasesStand?: (now: number) => boolean;
  /** The webhook intake: while it is busy, batches start seldom (intake-first.ts). None: never held for it. */
  intake?: IntakeBusy;
}

export type { OutboxEvent, OutboxEventPayload };

export interface ConnectorSummary {
  name: string;
  type: string;
  streams: readonly string[];
  depth: number;
  dead: number;
  check: ReadinessState;
}

export interface Outbox extends Component {
  /** The names of the connectors subscribed to a stream. */
  subscribers(stream: Stream): string[];
  /**
   * What the store enqueues for these records: each with its JSON text (`json`, by default
   * JSON.stringify) and the connectors subscribed to its stream; records nobody takes are left out.
   * Give it to a store call that commits it with the rest of a transaction, then `notify()`.
   */
  plan(records: readonly AnyRecord[], json?: (record: AnyRecord) => string): Enqueue[];
  /** Enqueues records (with state in the same transaction) and wakes the workers; resolves with the deliveries added. */
  enqueue(records: readonly AnyRecord[], state?: StatePatch): Promise<number>;
  /** Wakes the workers: something was enqueued. */
  notify(): void;
  /** Whether a connector of this name is in the config: the deliveries of one taken out are kept, not delivered. */
  configured(connector: string): boolean;
  /** Why a name is no connector at all (not in the config, and nothing in the store is owed to it), or undefined. */
  unknown(connector: string): Promise<string | undefined>;
  /** Holds back new delivery batches (those in flight finish) until the returned function is called. */
  holdDeliveries(): () => void;
  get(id: string): Promise<Delivery | undefined>;
  /** The store's list; the dead read a chunk per store call (`retryChunk`). */
  list(filter?: DeliveryFilter): Promise<ListedDelivery[]>;
  /** What a first cycle's ranges still owe, per connector and stream, as far as the filter covers them. */
  owedRanges(filter?: DeliveryFilter): Promise<OwedRange[]>;
  /** The deliveries with these ids that are still in the store (one that is done has left it). */
  find(ids: readonly string[]): Promise<ListedDelivery[]>;
  /**
   * Puts a dead (or waiting) delivery back to pending, due now, with a fresh retry window. Throws
   * for a delivery of a connector not in the config: nothing would deliver it.
   */
  retry(id: string): Promise<Delivery | undefined>;
  /** Every dead delivery of the connector, or of every connector in the config; throws for a connector not in it. */
  retryAllDead(connector?: string): Promise<string[]>;
  /** The ids of a connector's dead deliveries that `which` keeps, in enqueue order, read a chunk per store call. */
  deadIds(connector: string, which: (delivery: ListedDelivery) => boolean): Promise<string[]>;
  /**
   * Several dead (or waiting) deliveries back to pending at once; the ids retried (one in flight is
   * left to its outcome, and one of a connector not in the config as it is).
   */
  retryIds(ids: readonly string[]): Promise<string[]>;
  counts(): Promise<Map<string, OutboxCounts>>;
  /** Resolves when nothing is due or in flight (a held outbox: when nothing is in flight). */
  whenIdle(): Promise<void>;
  /** Deliveries this process settled as done so far (progress lines). */
  deliveredCount(): number;
  connectorState(name: string): ReadinessState;
  connectors(): Promise<ConnectorSummary[]>;
  on(event: OutboxEvent, listener: (payload: OutboxEventPayload) => void): () => void;
}

/**
 * Deliveries retried by hand per transaction: a connector that was down may have hundreds of
 * thousands dead, and retrying them in one transaction held SQLite's database thread (and every
 * webhook's commit) for seconds. Each chunk is due at once, and the workers are woken after each.
 */
const RETRY_CHUNK = 2000;
const DEFAULTS = { leaseMs: 10 * 60_000, sweepIntervalMs: 10_000, checkIntervalMs: 60_000, stopTimeoutMs: 5000, lingerMs: 0, retryChunk: RETRY_CHUNK };
const NOTICE_MS = 20;
/** How long deliveries cut off at stop get to record that they were (as a retry). */
const ABORTED_SETTLE_MS = 1000;

/** Why a delivery of a connector not in the config is not retried by hand. */
export function unconfigured(connector: string): string {
  return `connector "${connector}" is not in the config: its deliveries are kept, but nothing delivers them; add it back to the config to retry them`;
}

/** Why a name given for a connector's deliveries names none: neither the config nor the store has it. */
export function noSuchConnector(connector: string, names: readonly string[]): string {
  return `no connector "${connector}" in the config, and nothing owed to one of that name (connectors: ${names.join(', ') || 'none'})`;
}

/** Records without a key (an event whose object has no id) are ordered on their own. */
export function orderKey(record: AnyRecord): string {
  return orderKeyOf(record.stream, record.key, record.id);
}

/** `orderKey` of a record of `stream` with `key` and `id`: a record with no key is its own. */
export function orderKeyOf(stream: Stream, key: unknown, id: string): string {
  return key === null || key === undefined ? `${stream}#${id}` : `${stream}:${String(key)}`;
}

/**
 * The durable outbox (README.md): one delivery per (record, connector) in the store, delivered at
 * least once, in order per key, retried with back-off until `delivery.maxAgeHours`, then dead and
 * kept. The store holds the queue; this is the part that runs the connectors.
 */
export function createOutbox(options: OutboxOptions): Outbox {
  const { store, clock, log } = options;
  const random = options.random ?? Math.random;
  const settings = { ...DEFAULTS, ...definedOnly(options) };
  const policy: RetryPolicy = { ...options.delivery.backoff, maxAgeMs: options.delivery.maxAgeHours * 3_600_000 };
  const stopController = new AbortController();
  /** What connectors deliver under: aborted only once deliveries in flight had their time to finish at stop. */
  const deliveryController = new AbortController();
  const events = new OutboxEvents(log);
  let state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  let sweepLoop: Promise<void> | undefined;
  let holds = 0;
  let delivered = 0;

  const host: WorkerHost = {
    store, clock, log, policy, random,
    roles: options.roles ?? createLocalRoles('local'),
    leaseMs: settings.leaseMs,
    lingerMs: settings.lingerMs,
    ...(options.intake ? { intake: options.intake } : {}),
    concurrency: options.delivery.concurrency ?? 4,
    isRunning: () => state === 'running',
    isHeld: () => holds > 0,
    leasesStand: () => options.leasesStand?.(clock.now()) ?? true,
    settled: (worker, settled, startedAt) =>
      reportSettled({ metrics, log, events, now: clock.now(), delivered: (count) => (delivered += count) }, worker.name, settled, startedAt),
  };
  const workers = options.connectors.map((instance) => new ConnectorWorker(host, instance, contextFor(instance)));
  const configured = new Set(options.connectors.map((instance) => instance.name));
  /** A retry by hand of a connector's deliveries: refused when nothing would deliver them. */
  const mayRetry = (connector: string) => {
    // The admin API answers it 400 (an invalid request), the CLI with its message.
    if (!configured.has(connector)) throw new BridgeError('outbox.invalid_connector', unconfigured(connector));
  };
  const checks = createConnectorChecks({
    targets: workers.map((w) => ({ instance: w.instance, ctx: { ...w.ctx, signal: stopController.signal } })),
    clock,
    log,
    intervalMs: settings.checkIntervalMs,
    signal: stopController.signal,
  });
  events.on('retry', ({ delivery }) => checks.delivered(delivery.connector, false));
  events.on('delivered', ({ delivery }) => checks.delivered(delivery.connector, true));
  const metrics = createOutboxMetrics(options.metrics, async () => {
    const counts = await store.counts();
    // A connector taken out of the config keeps what it was owed, dead ones included: they count too.
    const names = new Set([...workers.map((w) => w.name), ...counts.keys()]);
    return [...names].map((name) => ({ connector: name, ...(counts.get(name) ?? { depth: 0, dead: 0 }) }));
  });

  function contextFor(instance: ConnectorInstance): ConnectorContext {
    return {
      config: instance.config,
      dispatcher: options.dispatcher,
      clock,
      log: log.child({ connector: instance.name }),
      signal: deliveryController.signal,
      metrics: options.metrics,
      cache: new Map(),
      ...(options.users ? { users: options.users } : {}),
    };
  }

  function pumpAll(): void {
    for (const worker of workers) worker.pump();
  }

  /**
   * Another replica's news. Each replica sends a notice at most every 50 ms, and several replicas
   * send theirs independently: the workers look once per NOTICE_MS at most, which is soon enough for
   * a delivery and spares the store a claim per notice.
   */
  let noticed: NodeJS.Timeout | undefined;
  let unwatch: (() => void) | undefined;
  function onChange(change: StoreChange): void {
    if (state !== 'running') return;
    if (change === 'roles') for (const worker of workers) worker.hold?.recheck();
    noticed ??= setTimeout(() => {
      noticed = undefined;
      pumpAll();
    }, NOTICE_MS);
  }

  async function sweep(): Promise<void> {
    const now = clock.now();
    try {
      const { reclaimed } = await store.sweep(now);
      if (reclaimed > 0) log.info({ reclaimed }, 'deliveries whose lease ran out are pending again');
    } catch (error) {
      log.warn({ err: describeError(error) }, 'outbox sweep failed');
    }
    pumpAll();
  }

  const subscribers = (stream: Stream) => workers.filter((w) => w.instance.streams.includes(stream)).map((w) => w.name);

  /**
   * The dead deliveries (of one connector, or of all) in enqueue order, at most `limit`, a chunk per
   * store call: an outage may leave hundreds of thousands, and one call for all of them would hold
   * SQLite's database thread (docs/store.md, "Reads that could take long").
   */
  async function* deadChunks(connector: string | undefined, limit = Infinity): AsyncGenerator<ListedDelivery[]> {
    let after = 0;
    let left = limit;
    while (left > 0) {
      const size = Math.min(settings.retryChunk, left);
      const chunk = await store.listDead({ ...(connector === undefined ? {} : { connector }), after, limit: size });
      if (chunk.length > 0) yield chunk;
      left -= chunk.length;
      const last = chunk.at(-1);
      if (chunk.length < size || !last) return;
      after = last.seq;
    }
  }

  const outbox: Outbox = {
    name: 'outbox',
    subscribers,
    plan(records, json = (record) => JSON.stringify(record)) {
      const out: Enqueue[] = [];
      for (const record of records) {
        const connectors = subscribers(record.stream);
        if (connectors.length > 0) out.push({ id: record.id, stream: record.stream, orderKey: orderKey(record), json: json(record), connectors });
      }
      return out;
    },
    async enqueue(records, patch) {
      const added = await store.enqueue(outbox.plan(records), patch);
      outbox.notify();
      return added;
    },
    notify() {
      pumpAll();
    },
    holdDeliveries() {
      holds += 1;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        holds -= 1;
        if (holds === 0) pumpAll();
      };
    },
    get: (id) => store.get(id),
    async list(filter = {}) {
      if (filter.state !== 'dead') return store.list(filter);
      const listed: ListedDelivery[] = [];
      for await (const chunk of deadChunks(filter.connector, filter.limit === undefined ? Infinity : Math.max(0, Math.floor(filter.limit)))) listed.push(...chunk);
      return listed;
    },
    owedRanges: async (filter) => owedOfRanges(await store.ranges(), filter),
    find: (ids) => store.lookup({ ids }),
    configured: (connector) => configured.has(connector),
    async retry(id) {
      const before = await store.get(id);
      if (!before) return undefined;
      mayRetry(before.connector);
      const now = clock.now();
      const [retried] = await store.retry({ id }, now);
      if (!retried) return store.get(id);
      // A worker (a wake-up of its own, another replica) may claim, deliver and settle it at once,
      // and a delivery that is done leaves the store: then it is what the retry made of it.
      const after = await store.get(retried);
      outbox.notify();
      if (after) return after;
      const { leaseUntil: _until, leaseOwner: _owner, ...rest } = before;
      return { ...rest, status: 'pending', attempts: 0, enqueuedAt: now, runAt: now };
    },
    async retryAllDead(connector) {
      if (connector !== undefined) {
        // A name that is neither configured nor owed anything is no connector at all: the admin API answers 404.
        const why = await outbox.unknown(connector);
        if (why) throw new BridgeError('outbox.not_found', why);
        mayRetry(connector);
      }
      const retried: string[] = [];
      for (const name of connector === undefined ? configured : [connector]) {
        for (let after = 0; ;) {
          const chunk = await store.retryDead({ connector: name, after, limit: settings.retryChunk }, clock.now());
          retried.push(...chunk.ids);
          if (chunk.ids.length > 0) outbox.notify();
          if (chunk.ids.length < settings.retryChunk || chunk.last === undefined) break;
          after = chunk.last;
        }
      }
      return retried;
    },
    async deadIds(connector, which) {
      const ids: string[] = [];
      for await (const chunk of deadChunks(connector)) for (const delivery of chunk) if (which(delivery)) ids.push(delivery.id);
      return ids;
    },
    async retryIds(named) {
      const ids = named.filter((id) => configured.has(ofDeliveryId(id)?.connector ?? ''));
      const retried: string[] = [];
      const size = settings.retryChunk;
      for (let i = 0; i < ids.length; i += size) retried.push(...(await store.retry({ ids: ids.slice(i, i + size) }, clock.now())));
      if (retried.length > 0) outbox.notify();
      return retried;
    },
    counts: () => store.counts(),
    async unknown(connector) {
      if (configured.has(connector)) return undefined;
      const owed = (await store.counts()).get(connector);
      return owed && owed.depth + owed.dead > 0 ? undefined : noSuchConnector(connector, [...configured]);
    },
    whenIdle: () =>
      waitIdle({ workers, store, clock, pumpAll, stillWaiting: () => holds === 0 && state === 'running' }),
    deliveredCount: () => delivered,
    connectorState: (name) => checks.state(name),
    async connectors() {
      const counts = await store.counts();
      return workers.map((w) => ({
        name: w.name, type: w.instance.connector.type, streams: w.instance.streams,
        ...(counts.get(w.name) ?? { depth: 0, dead: 0 }), check: checks.state(w.name),
      }));
    },
    on: (event, listener) => events.on(event, listener),
    async start() {
      if (state !== 'new') return;
      state = 'running';
      unwatch = options.watch?.(onChange);
      checks.start();
      sweepLoop = (async () => {
        for (;;) {
          await clock.sleep(settings.sweepIntervalMs, stopController.signal);
          await sweep();
        }
      })().catch(() => {});
      pumpAll();
      const counts = await store.counts().catch(() => new Map<string, OutboxCounts>());
      let queued = 0;
      let dead = 0;
      for (const c of counts.values()) {
        queued += c.depth;
        dead += c.dead;
      }
      const unknown = [...counts.keys()].filter((name) => !workers.some((w) => w.name === name));
      if (unknown.length > 0) log.warn({ connectors: unknown }, 'deliveries for connectors no longer configured are kept, not delivered');
      log.info({ connectors: workers.map((w) => w.name), queued, dead }, 'outbox started');
    },
    async stop() {
      if (state !== 'running') return;
      state = 'stopping';
      stopController.abort(new Error('the outbox is stopping'));
      for (const worker of workers) worker.cancelWake();
      const inFlight = Promise.allSettled([...workers.flatMap((w) => w.busy()), sweepLoop, checks.stop()]);
      unwatch?.();
      clearTimeout(noticed);
      // No new batch starts; those in flight get stopTimeoutMs to finish and record their outcome.
      // Cut off at once, a receiver that had taken one would get it again after the restart.
      let finished = await withTimeout(inFlight, settings.stopTimeoutMs);
      if (!finished) {
        deliveryController.abort(new Error('the outbox is stopping'));
        finished = await withTimeout(inFlight, ABORTED_SETTLE_MS);
      }
      if (!finished) log.warn({ timeoutMs: settings.stopTimeoutMs }, 'deliveries still in flight at stop; they will be redelivered');
      // Nothing of this replica's is in flight any more: what the connectors hold open can close,
      // and the others may take the connectors at once.
      if (finished) await Promise.all(workers.map(async (w) => {
        await releaseCache(w.ctx.cache);
        await w.hold?.release();
      }));
      state = 'stopped';
    },
  };
  return outbox;
}

function definedOnly(options: OutboxOptions): Partial<typeof DEFAULTS> {
  const out: Partial<typeof DEFAULTS> = {};
  for (const key of Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]) if (options[key] !== undefined) out[key] = options[key];
  return out;
}
