import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type pg from 'pg';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../../clock.js';
import { BridgeError, describeError } from '../../errors.js';
import { createBatcher } from '../batcher.js';
import { storeError } from '../errors.js';
import { createHealth } from '../health.js';
import { startHeartbeat } from '../heartbeat.js';
import type { SnapshotStream, Store } from '../port.js';
import { createPool, prepared, transaction, type Db } from './db.js';
import * as inbox from './inbox.js';
import { createListener } from './listener.js';
import { enqueue } from './enqueue.js';
import * as history from './history.js';
import * as outbox from './outbox.js';
import * as outboxLookup from './outbox-lookup.js';
import * as people from './people.js';
import * as ranges from './ranges.js';
import { createPgRoles, releaseAll } from './roles.js';
import { migrate } from './schema.js';
import * as snapshot from './snapshot.js';
import { createStagingLocks } from './staging-lock.js';
import * as state from './state.js';

export interface PgStoreOptions {
  url: string;
  log: Logger;
  clock?: Clock;
  /** Connections in the pool (default 10). */
  poolSize?: number;
  heartbeatMs?: number;
  /** How long start-up waits for the database to answer (default 30 s). */
  connectTimeoutMs?: number;
}

/** SQLSTATE classes and socket errors after which the same call can succeed later. */
const UNAVAILABLE_STATES = /^(08|53|57P|58|40001|40P01)/;
const SOCKET_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH']);

export function isUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown };
  if (typeof e?.code === 'string' && (UNAVAILABLE_STATES.test(e.code) || SOCKET_ERRORS.has(e.code))) return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable/i.test(message);
}

/**
 * The shared store (docs/store.md): PostgreSQL at `store.url`, any number of replicas on one
 * database. Each port method is one transaction on a pooled connection; webhook events arriving
 * together share one (createBatcher), since a durable commit costs the same for one row or fifty.
 */
export function createPgStore(options: PgStoreOptions): Store {
  const { log } = options;
  const clock = options.clock ?? systemClock;
  const health = createHealth();
  const self = { id: randomUUID(), host: hostname(), pid: process.pid, startedAt: clock.now() };
  let pool: pg.Pool | undefined;
  let heartbeat: { stop(): Promise<void> } | undefined;
  let url: string | undefined;
  let open = false;
  const staging = createStagingLocks(() => pool);
  /** The fence each stream's staging took at `begin` (snapshot.ts): what this process's cycle may apply under. */
  const fences = new Map<SnapshotStream, number>();
  const fenceOf = (stream: SnapshotStream): number => {
    const fence = fences.get(stream);
    if (fence === undefined) throw new BridgeError('poll.not_staging', `no poll cycle of this process is staging ${stream}`);
    return fence;
  };

  /** Runs a call, translating its failure and keeping health: `write` calls say whether the store can write. */
  async function run<T>(write: boolean, work: (db: Db) => Promise<T>, inTransaction = write, durable = true): Promise<T> {
    if (!pool || !open) throw new BridgeError('store.closed', 'the store is not open', { retryable: true });
    try {
      const value = inTransaction ? await transaction(pool, work, durable) : await work(prepared(pool));
      if (write) health.succeeded();
      return value;
    } catch (error) {
      // The store's own refusals (a fenced cycle) say what they are.
      if (error instanceof BridgeError) throw error;
      const unavailable = isUnavailable(error);
      if (unavailable) health.failed(describeError(error), clock.now());
      throw storeError(unavailable, describeError(error), error);
    }
  }
  const write = <T>(work: (db: Db) => Promise<T>) => run(true, work);
  const read = <T>(work: (db: Db) => Promise<T>) => run(false, work, false);
  /**
   * Claims and settlements need not wait for the disk: losing the last of them in a crash only means
   * a delivery is made again with the same record id, which a crash between a delivery and its
   * settlement means anyway. Webhooks' and cycles' commits stay durable, and each one makes every
   * commit before it durable too.
   */
  const lease = <T>(work: (db: Db) => Promise<T>) => run(true, work, true, false);

  const accepts = createBatcher<inbox.Accept, 'stored' | 'duplicate'>({
    // One statement: its own transaction, one round trip.
    run: (batch) => run(true, (db) => inbox.accepts(db, batch), false),
    concurrency: 4,
    maxItems: 200,
    isUnavailable: (error) => (error as BridgeError).code === 'store.unavailable',
  });

  async function connect(): Promise<void> {
    const deadline = clock.now() + (options.connectTimeoutMs ?? 30_000);
    for (let attempt = 1; ; attempt++) {
      try {
        await migrate(pool!);
        return;
      } catch (error) {
        if (error instanceof BridgeError) throw error;
        if (!isUnavailable(error) || clock.now() >= deadline) {
          const unavailable = isUnavailable(error);
          throw new BridgeError(unavailable ? 'store.unavailable' : 'store.failed', `cannot open the PostgreSQL store (store.url): ${describeError(error)}`, { retryable: unavailable, cause: error });
        }
        if (attempt === 1) log.warn({ err: describeError(error) }, 'PostgreSQL does not answer yet; waiting');
        await clock.sleep(1000);
      }
    }
  }

  const listener = createListener({ url: options.url, log, clock });

  const store: Store = {
    name: 'store',
    engine: 'postgres',
    shared: true,
    replicaId: self.id,
    roles: createPgRoles(self.id, (work) => run(true, work, false)),
    watch: (watcher) => listener.on(watcher),
    inbox: {
      accept: (entry, records) => accepts.call({ entry, records }),
      get: (id) => read((db) => inbox.getEvent(db, id)),
      reprocess: (id, expected, recordIds, records) => write((db) => inbox.reprocess(db, id, expected, recordIds, records, clock.now())),
      quarantine: (entry) => write((db) => inbox.quarantine(db, entry)),
      quarantined: () => read((db) => inbox.quarantined(db)),
      release: (id, entry, records) => write((db) => inbox.release(db, id, entry, records)),
      prune: (before) => write((db) => inbox.prune(db, before)),
      search: (texts, limit) => read((db) => inbox.search(db, texts, limit)),
    },
    outbox: {
      enqueue: (records, patch = {}) => write(async (db) => {
        const added = await enqueue(db, records, clock.now());
        await state.putState(db, patch);
        return added;
      }),
      claim: (request) => lease((db) => outbox.claim(db, self.id, request)),
      settle: (settlements) => lease((db) => outbox.settle(db, self.id, settlements)),
      retry: (target, now) => write((db) => outbox.retry(db, target, now)),
      get: (id) => read((db) => outbox.getDelivery(db, id, clock.now())),
      list: (filter) => read((db) => outbox.list(db, filter, clock.now())),
      counts: () => read((db) => outbox.counts(db)),
      nextRunAt: (connector) => read((db) => outbox.nextRunAt(db, connector)),
      ranges: () => read((db) => ranges.ranges(db)),
      sweep: (now) => write((db) => outbox.sweep(db, now)),
      lookup: (query) => read((db) => outboxLookup.lookup(db, query, clock.now())),
      retrying: () => read((db) => outboxLookup.retrying(db)),
    },
    snapshot: {
      size: (stream) => read((db) => snapshot.size(db, stream)),
      version: (stream) => read((db) => snapshot.version(db, stream)),
      index: (stream) => read((db) => snapshot.index(db, stream)),
      rows: (stream, keys) => read((db) => snapshot.rows(db, stream, keys)),
      scan: (stream, after, limit) => read((db) => snapshot.scan(db, stream, after, limit)),
      async begin(stream, kind) {
        await staging.take(stream);
        try {
          fences.set(stream, await write((db) => snapshot.begin(db, stream, kind)));
        } catch (error) {
          await staging.release(stream);
          throw error;
        }
      },
      stageFresh: (stream, rows) => write((db) => snapshot.stageFresh(db, stream, fenceOf(stream), rows)),
      stageChanges: (stream, rows) => write((db) => snapshot.stageChanges(db, stream, fenceOf(stream), rows)),
      // Only what this process staged: the staging tables of another process's cycle are its own.
      async discard(stream) {
        if (!staging.holds(stream)) return;
        try {
          await write((db) => snapshot.discard(db, stream, fenceOf(stream)));
        } finally {
          fences.delete(stream);
          await staging.release(stream);
        }
      },
      async applyFresh(stream, apply) {
        await write((db) => snapshot.applyFresh(db, stream, fenceOf(stream), apply.state, apply.created));
        fences.delete(stream);
        await staging.release(stream);
      },
      async applyChanges(stream, apply) {
        const result = await write((db) => snapshot.applyChanges(db, stream, fenceOf(stream), apply.limit, apply.connectors, apply.state, apply.now));
        if (result.done) {
          fences.delete(stream);
          await staging.release(stream);
        }
        return result;
      },
      materializeCreated: (stream, limit, now) => write((db) => ranges.materializeCreated(db, stream, limit, now)),
      createdPending: (stream) => read((db) => ranges.createdPending(db, stream)),
    },
    state: {
      get: <T>(key: string) => read(async (db) => (await state.getState(db, key)) as T | undefined),
      put: (patch) => write((db) => state.putState(db, patch)),
    },
    history: {
      recordRun: (run, patch = {}) => write((db) => history.recordRun(db, self.id, run, patch)),
      runs: (query) => read((db) => history.runs(db, query)),
      count: (entries) => write((db) => history.count(db, self.id, entries)),
      tallies: (kind, since) => read((db) => history.tallies(db, kind, since)),
      attempts: (filter) => read((db) => history.attempts(db, filter)),
      prune: (before) => write((db) => history.prune(db, before)),
    },
    people: {
      refresh: (stream, limit) => write((db) => people.refresh(db, stream, limit)),
      search: (query, limit) => read((db) => people.search(db, query, limit)),
      get: (refs) => read((db) => people.get(db, refs)),
    },
    replicas: {
      beat: (now, at) => write((db) => state.beat(db, self, now, at ?? url)),
      live: (since) => read((db) => state.live(db, since)),
    },
    health: () => (open ? health.current() : { ok: false, reason: 'store not open', since: self.startedAt }),
    onHealth: (listener) => health.on(listener),
    async advertise(at) {
      url = at;
      await store.replicas.beat(clock.now(), at);
    },
    async start() {
      if (open) return;
      pool = createPool(options.url, options.poolSize ?? 10);
      // An idle connection that breaks (the server restarted) is dropped; the next call reconnects.
      pool.on('error', (error) => log.warn({ err: describeError(error) }, 'a PostgreSQL connection broke'));
      try {
        await connect();
      } catch (error) {
        await pool.end().catch(() => {});
        pool = undefined;
        throw error;
      }
      open = true;
      await store.replicas.beat(clock.now());
      await listener.start();
      heartbeat = startHeartbeat({ beat: () => store.replicas.beat(clock.now()), health, clock, log, intervalMs: options.heartbeatMs ?? 5000 });
      log.info({ engine: 'postgres', replica: self.id }, 'store opened');
    },
    async stop() {
      if (!open) return;
      await heartbeat?.stop();
      await staging.releaseAll();
      await write(async (db) => {
        await releaseAll(db, self.id);
        await state.leave(db, self.id);
      }).catch(() => {});
      await listener.stop();
      open = false;
      await pool?.end();
      pool = undefined;
    },
  };
  return store;
}
