import type { Dispatcher } from 'undici';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { ConnectorContext, DeliveryOutcome } from '../connectors/types.js';
import type { Component } from '../lifecycle.js';
import type { ReadinessState } from '../readiness.js';
import { knownJson } from '../record-json.js';
import type { AnyRecord } from '../records.js';
import type { Op, Store } from '../store/index.js';
import { createConnectorChecks } from './connector-checks.js';
import type { ConnectorInstance } from './connector-instance.js';
import { DeliveredLog } from './delivered-log.js';
import { OutboxEvents, type OutboxEvent, type OutboxEventPayload } from './events.js';
import { DELIVERED, ENTRIES, RECORDS, entryId, newEntry, type OutboxEntry } from './entry.js';
import { listEntries, type ListFilter, type ListedEntry } from './list.js';
import { createOutboxMetrics } from './outbox-metrics.js';
import { QueueIndex } from './queue-index.js';
import type { RetryPolicy } from './retry-policy.js';
import { putEntry as put, startupOps, sweepOps } from './recovery.js';
import { retryByHand, settle, type Settled } from './transitions.js';
import { ConnectorWorker, type WorkerHost } from './worker.js';

export type OutboxStore = Pick<Store, 'get' | 'has' | 'entries' | 'commit' | 'stage'>;

export interface OutboxOptions {
  store: OutboxStore;
  connectors: readonly ConnectorInstance[];
  delivery: { maxAgeHours: number; backoff: { baseMs: number; maxMs: number }; concurrency?: number };
  clock: Clock;
  dispatcher: Dispatcher;
  log: Logger;
  metrics: Registry;
  random?: () => number;
  /** How long a delivery may take before it is abandoned and retried (default 10 min). */
  leaseMs?: number;
  /** Reclaims expired leases and prunes the delivered log this often (default 30 s). */
  sweepIntervalMs?: number;
  /** Connector checks for /readyz this often; 0 runs none (one-shot commands). Default 60 s. */
  checkIntervalMs?: number;
  /** How long stop() waits for deliveries in flight (default 5 s). */
  stopTimeoutMs?: number;
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
  /**
   * Store ops that enqueue `records` for every connector subscribed to their stream, skipping pairs
   * already queued or delivered. Commit them in the SAME synchronous tick, together with your own ops
   * (`store.commit([...mine, ...outbox.enqueueOps(records)])`), then call `notify()`.
   */
  enqueueOps(records: readonly AnyRecord[]): Op[];
  /**
   * Holds back new delivery batches (those in flight finish) until the returned function is called,
   * for a bulk producer: a first poll cycle committing 300,000 records took 5 s longer with their
   * deliveries running beside its commit on the same thread (bench:poll, poll/README.md).
   */
  holdDeliveries(): () => void;
  /** Commits `enqueueOps(records)` and wakes the workers; resolves with the number of new entries. */
  enqueue(records: readonly AnyRecord[]): Promise<number>;
  notify(): void;
  get(id: string): OutboxEntry | undefined;
  list(filter?: ListFilter): ListedEntry[];
  /** Puts a dead (or waiting) entry back to pending, due now, with a fresh retry window. */
  retry(id: string): Promise<OutboxEntry | undefined>;
  retryAllDead(connector?: string): Promise<string[]>;
  depth(connector?: string): number;
  deadCount(connector?: string): number;
  /** Resolves when nothing is due or in flight and every outbox write is durable. */
  whenIdle(): Promise<void>;
  connectorState(name: string): ReadinessState;
  connectors(): ConnectorSummary[];
  on(event: OutboxEvent, listener: (payload: OutboxEventPayload) => void): () => void;
}

const DEFAULTS = { leaseMs: 10 * 60_000, sweepIntervalMs: 30_000, checkIntervalMs: 60_000, stopTimeoutMs: 5000 };

/**
 * The durable outbox (issue 5): one entry per (record, connector) in the store, delivered at least
 * once, in order per key, retried with back-off until `delivery.maxAgeHours`, then dead and kept.
 * See README.md for the states, the store layout and the back-off table.
 */
export function createOutbox(options: OutboxOptions): Outbox {
  const { store, clock, log } = options;
  const random = options.random ?? Math.random;
  const settings = { ...DEFAULTS, ...definedOnly(options) };
  const policy: RetryPolicy = { ...options.delivery.backoff, maxAgeMs: options.delivery.maxAgeHours * 3_600_000 };
  const stopController = new AbortController();
  const index = new QueueIndex();
  const delivered = new DeliveredLog();
  const events = new OutboxEvents(log);
  const commits = new Set<Promise<void>>();
  let unverified: string[] = [];
  let loaded = false;
  let nextSeq = 1;
  let state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  let sweepLoop: Promise<void> | undefined;
  /** Holders of holdDeliveries() not released yet. */
  let holds = 0;

  const host: WorkerHost = {
    clock,
    leaseMs: settings.leaseMs,
    concurrency: options.delivery.concurrency ?? 4,
    get: (id) => store.get<OutboxEntry>(ENTRIES, id),
    record: (key) => store.get<AnyRecord>(RECORDS, key),
    isHead: (entry) => index.head(entry.connector, entry.order) === entry.id,
    isRunning: () => state === 'running',
    isHeld: () => holds > 0,
    // Leases are staged, not written: after a crash every lease is pending again anyway (recovery.ts).
    stageLeases: (entries) => store.stage(entries.map(put)),
    settle: settleBatch,
  };
  const workers = options.connectors.map((instance) => new ConnectorWorker(host, instance, contextFor(instance)));
  const byName = new Map(workers.map((w) => [w.name, w]));
  const checks = createConnectorChecks({
    targets: workers.map((w) => ({ instance: w.instance, ctx: w.ctx })),
    clock,
    log,
    intervalMs: settings.checkIntervalMs,
    signal: stopController.signal,
  });
  const metrics = createOutboxMetrics(options.metrics, () => workers.map((w) => ({ connector: w.name, ...counts(w.name) })));

  function contextFor(instance: ConnectorInstance): ConnectorContext {
    return {
      config: instance.config,
      dispatcher: options.dispatcher,
      clock,
      log: log.child({ connector: instance.name }),
      signal: stopController.signal,
      metrics: options.metrics,
      cache: new Map(),
    };
  }

  /** Tracks a write so whenIdle() and stop() can wait for it; a failed write is logged (the store says why). */
  function track(commit: Promise<void>, then?: () => void, onError?: () => void): void {
    const done = commit.then(then, (error: unknown) => {
      log.error({ err: error }, 'outbox write failed');
      onError?.();
    });
    commits.add(done);
    void done.finally(() => commits.delete(done));
  }

  /** Builds the index from the store (lazily: a producer may enqueue before start). */
  function ensureLoaded(): void {
    if (loaded) return;
    loaded = true;
    let maxSeq = 0;
    for (const [, entry] of store.entries<OutboxEntry>(ENTRIES)) {
      index.add(entry);
      maxSeq = Math.max(maxSeq, entry.seq);
    }
    index.sortBy((id) => store.get<OutboxEntry>(ENTRIES, id)?.seq ?? 0);
    nextSeq = maxSeq + 1;
    delivered.load(store.entries<number>(DELIVERED));
    const unknown = [...store.entries<OutboxEntry>(ENTRIES)].filter(([, e]) => !byName.has(e.connector));
    if (unknown.length > 0) {
      log.warn({ count: unknown.length, connectors: [...new Set(unknown.map(([, e]) => e.connector))] }, 'deliveries for connectors no longer configured are kept, not delivered');
    }
  }

  /**
   * Entries an enqueueOps caller did not commit after all are forgotten (see enqueueOps). Runs in the
   * microtask after the enqueueOps call, when the caller's synchronous commit has applied its ops.
   */
  function verify(): void {
    if (unverified.length === 0) return;
    for (const id of unverified) if (!store.has(ENTRIES, id)) index.remove(id);
    unverified = [];
  }

  /** Makes the head of a key a candidate of its worker (after it changed, or a new head took over). */
  function scheduleHead(connector: string, order: string): void {
    const id = index.head(connector, order);
    const entry = id === undefined ? undefined : store.get<OutboxEntry>(ENTRIES, id);
    if (entry) byName.get(connector)?.schedule(entry);
  }

  function pumpAll(): void {
    verify();
    for (const worker of workers) worker.pump();
  }

  function settleBatch(worker: ConnectorWorker, leased: OutboxEntry[], outcomes: DeliveryOutcome[], startedAt: number): void {
    const now = clock.now();
    metrics.duration.observe({ connector: worker.name }, (now - startedAt) / 1000);
    const ops: Op[] = [];
    const settled: Settled[] = [];
    // Counted per batch and outcome: one label lookup per batch rather than one per record.
    const outcomeCounts = { done: 0, retry: 0, dead: 0 };
    leased.forEach((entry, i) => {
      if (!store.has(ENTRIES, entry.id)) return;
      const result = settle(entry, outcomes[i]!, { now, policy, random: random(), stopping: state !== 'running' });
      settled.push(result);
      outcomeCounts[result.kind] += 1;
      if (result.kind === 'dead') index.setDead(entry.id, true);
      if (result.kind !== 'done') return void ops.push(put(result.entry));
      ops.push({ op: 'del', c: ENTRIES, k: entry.id }, { op: 'put', c: DELIVERED, k: entry.id, v: now });
      delivered.add(entry.id, now);
      if (index.release(entry.id) === 0) ops.push({ op: 'del', c: RECORDS, k: entry.key });
      metrics.lag.observe({ connector: worker.name }, Math.max(0, now - entry.enqueuedAt) / 1000);
    });
    for (const [outcome, count] of Object.entries(outcomeCounts)) if (count > 0) metrics.deliveries.inc({ connector: worker.name, outcome }, count);
    for (const r of settled) if (r.kind === 'dead') log.warn({ id: r.entry.id, error: r.entry.lastError }, 'delivery dead');
    // The next entry of a key becomes eligible only once this batch's "done" is durable.
    const dequeue = () => {
      for (const r of settled) {
        if (r.kind !== 'done') continue;
        index.remove(r.entry.id);
        scheduleHead(r.entry.connector, r.entry.order);
      }
      worker.pump();
    };
    const commit = store.commit(ops);
    for (const r of settled) if (r.kind === 'retry') worker.schedule(r.entry);
    track(commit, () => {
      dequeue();
      for (const r of settled) events.emit(r.kind === 'done' ? 'delivered' : r.kind, r.kind === 'done' ? { entry: r.entry } : { entry: r.entry, error: r.error });
    }, dequeue);
  }

  function sweep(): void {
    verify();
    const inFlight = (id: string) => workers.some((w) => w.inFlight.has(id));
    const ops = sweepOps({ entries: store.entries<OutboxEntry>(ENTRIES), delivered, now: clock.now(), retentionMs: policy.maxAgeMs, inFlight });
    if (ops.length > 0) {
      track(store.commit(ops), pumpAll);
      for (const op of ops) if (op.op === 'put') scheduleHead((op.v as OutboxEntry).connector, (op.v as OutboxEntry).order);
    }
    pumpAll();
  }

  function counts(connector?: string): { depth: number; dead: number } {
    return index.counts(connector);
  }

  const outbox: Outbox = {
    name: 'outbox',
    enqueueOps(records) {
      ensureLoaded();
      const now = clock.now();
      const ops: Op[] = [];
      const newRecords = new Set<string>();
      for (const record of records) {
        for (const worker of workers) {
          if (!worker.instance.streams.includes(record.stream)) continue;
          const id = entryId(worker.name, record.id);
          if (index.has(id) || store.has(ENTRIES, id) || store.has(DELIVERED, id)) continue;
          const entry = newEntry(worker.name, record, nextSeq++, now);
          index.add(entry);
          if (index.head(entry.connector, entry.order) === id) worker.schedule(entry);
          if (unverified.push(id) === 1) queueMicrotask(verify);
          ops.push(put(entry));
          if (!newRecords.has(record.id) && !store.has(RECORDS, record.id)) {
            newRecords.add(record.id);
            const json = knownJson(record);
            ops.push({ op: 'put', c: RECORDS, k: record.id, v: record, ...(json === undefined ? {} : { json }) });
          }
        }
      }
      return ops;
    },
    holdDeliveries() {
      holds += 1;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        holds -= 1;
        if (holds === 0) queueMicrotask(pumpAll);
      };
    },
    async enqueue(records) {
      const ops = outbox.enqueueOps(records);
      await store.commit(ops);
      outbox.notify();
      return ops.filter((op) => op.c === ENTRIES).length;
    },
    notify() {
      // After the caller's commit: never in the tick of enqueueOps, whatever the caller does.
      queueMicrotask(pumpAll);
    },
    get: (id) => store.get<OutboxEntry>(ENTRIES, id),
    list: (filter) => listEntries((function* () {
      for (const [, entry] of store.entries<OutboxEntry>(ENTRIES)) yield entry;
    })(), filter),
    async retry(id) {
      const entry = store.get<OutboxEntry>(ENTRIES, id);
      if (!entry) return undefined;
      if (workers.some((w) => w.inFlight.has(id))) return entry;
      const next = retryByHand(entry, clock.now());
      const commit = store.commit([put(next)]);
      index.setDead(id, false);
      scheduleHead(next.connector, next.order);
      await commit;
      outbox.notify();
      return next;
    },
    async retryAllDead(connector) {
      const now = clock.now();
      const dead = [...store.entries<OutboxEntry>(ENTRIES)]
        .map(([, e]) => e)
        .filter((e) => e.status === 'dead' && (connector === undefined || e.connector === connector));
      const commit = store.commit(dead.map((e) => put(retryByHand(e, now))));
      for (const e of dead) index.setDead(e.id, false);
      for (const e of dead) scheduleHead(e.connector, e.order);
      await commit;
      outbox.notify();
      return dead.map((e) => e.id);
    },
    depth: (connector) => counts(connector).depth,
    deadCount: (connector) => counts(connector).dead,
    async whenIdle() {
      for (;;) {
        pumpAll();
        const busy = [...workers.flatMap((w) => [...w.batches]), ...commits];
        if (busy.length === 0) return;
        await Promise.race(busy.map((p) => p.catch(() => {})));
      }
    },
    connectorState: (name) => checks.state(name),
    connectors: () =>
      workers.map((w) => ({ name: w.name, type: w.instance.connector.type, streams: w.instance.streams, ...counts(w.name), check: checks.state(w.name) })),
    on: (event, listener) => events.on(event, listener),
    async start() {
      if (state !== 'new') return;
      ensureLoaded();
      const recovered = startupOps({
        entries: store.entries<OutboxEntry>(ENTRIES), records: store.entries(RECORDS), index, delivered, now: clock.now(), retentionMs: policy.maxAgeMs,
      });
      if (recovered.length > 0) log.info({ ops: recovered.length }, 'outbox recovered: leases reclaimed, orphaned records and old delivered pairs dropped');
      await store.commit(recovered);
      for (const worker of workers) for (const id of index.heads(worker.name)) scheduleHead(worker.name, store.get<OutboxEntry>(ENTRIES, id)!.order);
      state = 'running';
      checks.start();
      sweepLoop = (async () => {
        for (;;) {
          await clock.sleep(settings.sweepIntervalMs, stopController.signal);
          sweep();
        }
      })().catch(() => {});
      pumpAll();
      log.info({ connectors: workers.map((w) => w.name), queued: counts().depth, dead: counts().dead }, 'outbox started');
    },
    async stop() {
      if (state !== 'running') return;
      state = 'stopping';
      stopController.abort(new Error('the outbox is stopping'));
      for (const worker of workers) worker.cancelWake();
      const inFlight = Promise.allSettled([...workers.flatMap((w) => [...w.batches]), sweepLoop, checks.stop()]).then(() => Promise.allSettled([...commits]));
      const finished = await withTimeout(inFlight, settings.stopTimeoutMs);
      if (!finished) log.warn({ timeoutMs: settings.stopTimeoutMs }, 'deliveries still in flight at stop; they will be redelivered');
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

/** A real-time bound (not the injected clock: a fake clock must not make stop() hang). */
async function withTimeout(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
