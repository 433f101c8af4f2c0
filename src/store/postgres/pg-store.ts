import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type pg from 'pg';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../../clock.js';
import { BridgeError, describeError } from '../../errors.js';
import { createHealth } from '../health.js';
import { startHeartbeat } from '../heartbeat.js';
import { OWN_LEASES_MS, REPLICA_TTL_MS } from '../tables.js';
import type { Store } from '../port.js';
import type { StoreTimings } from '../timings.js';
import { createPgCalls, isUnavailable } from './calls.js';
import { createPool, fillOneByOne, fillPool } from './db.js';
import { createSchemaFix, ownSchemaFix } from './schema-grants.js';
import { createListener } from './listener.js';
import { createNotifier } from './notifier.js';
import { pgPortMethods, type Self } from './port-methods.js';
import { createPgRoles, releaseAll } from './roles.js';
import { migrate, SCHEMA } from './schema.js';
import { createPgSnapshot } from './snapshot-methods.js';
import { createOutboxStatistics } from './statistics.js';
import * as state from './state.js';
import { sslFix } from './ssl-mode.js';

/** Connections that break within this long of a logged warning are logged at debug level. */
const BROKE_WARN_MS = 10_000;
/** How long start-up waits for the listener's first attempt before it opens the pool's connections. */
const LISTEN_FIRST_MS = 2000;

export interface PgStoreOptions {
  url: string;
  log: Logger;
  clock?: Clock;
  /** Connections in the pool (default 10). */
  poolSize?: number;
  /**
   * Opens every connection of the pool at start (default true), as a daemon wants it: its poll
   * cycles take several at once beside the webhooks (docs/store.md, "The pool"). A command that runs
   * once opens them as it needs them, and holds fewer of the server's connections beside the replicas.
   */
  fillAtStart?: boolean;
  heartbeatMs?: number;
  /** How long start-up waits for the database to answer (default 30 s). */
  connectTimeoutMs?: number;
  /** Told how long write transactions and their durable commits take (timings.ts). */
  timings?: StoreTimings;
}

/**
 * The shared store (docs/store.md): PostgreSQL at `store.url`, any number of replicas on one
 * database. This file is the store's life: the pool, the migrations, the listener, the heartbeat;
 * the port's methods are in port-methods.ts and snapshot-methods.ts, each one transaction (calls.ts).
 */
/**
 * What to do about a refusal at start-up that the operator fixes in the database: the role of
 * `store.url` may not create the schema and its tables (SQLSTATE 42501, insufficient privilege).
 */
function fixFor(error: unknown, url: string): string {
  const ssl = sslFix(error, url);
  if (ssl) return ssl;
  const code = (error as { code?: unknown }).code;
  if (code === '3F000') {
    // The schema is there (search_path names it) but the role may not use it: made by another role.
    return `; the schema ${SCHEMA} exists but ${roleOf(url)} may not create in it: ${ownSchemaFix(roleOf(url))}, or drop it and let the role create it`;
  }
  if (code !== '42501') return '';
  return `; the role creates the schema ${SCHEMA} and its tables at start: ${createSchemaFix(roleOf(url), databaseOf(url))}`;
}

/** PostgreSQL's "too many connections" (a role's CONNECTION LIMIT, or max_connections for non-superusers). */
const TOO_MANY_CONNECTIONS = '53300';
/** The fewest pool connections a process runs on: the schema's least store.poolSize. */
const LEAST_CONNECTIONS = 4;

/** The role of store.url, quoted as SQL names it, for a fix to paste; a URL the driver read but URL does not gets the generic name. */
function roleOf(url: string): string {
  const username = URL.canParse(url) ? new URL(url).username : '';
  return username ? `"${decodeURIComponent(username)}"` : 'the role of store.url';
}

/** The database of store.url, quoted as SQL names it. */
function databaseOf(url: string): string {
  const pathname = URL.canParse(url) ? new URL(url).pathname : '';
  return pathname.length > 1 ? `"${decodeURIComponent(pathname.slice(1))}"` : 'its database';
}

export function createPgStore(options: PgStoreOptions): Store {
  const { log } = options;
  const clock = options.clock ?? systemClock;
  const health = createHealth();
  const self: Self = { id: randomUUID(), host: hostname(), pid: process.pid, startedAt: clock.now() };
  let pool: pg.Pool | undefined;
  let heartbeat: { stop(): Promise<void> } | undefined;
  let url: string | undefined;
  let open = false;
  /** Connections the server granted at start (fillAtStart): each heartbeat tops the pool up to them. */
  let granted = 0;
  let topping: Promise<void> | undefined;
  /** When a broken connection was last logged as a warning (see start). */
  let brokeWarnedAt = -Infinity;
  const notifier = createNotifier({ pool: () => pool, log, clock });
  const statistics = createOutboxStatistics({ pool: () => pool, log });
  const calls = createPgCalls({ pool: () => pool, isOpen: () => open, health, clock, notify: notifier.tell, grew: statistics.grew, timings: options.timings });
  const { snapshot, staging } = createPgSnapshot(calls, () => pool);
  const listener = createListener({ url: options.url, log, clock });

  /** Set while start() runs: cancel() ends its wait for the database. */
  let starting: AbortController | undefined;

  /** Migrates, waiting up to `connectTimeoutMs` for a database that does not answer yet, unless cancelled. */
  async function connect(signal: AbortSignal): Promise<void> {
    const waitMs = options.connectTimeoutMs ?? 30_000;
    const deadline = clock.now() + waitMs;
    for (let attempt = 1; ; attempt++) {
      try {
        await migrate(pool!);
        return;
      } catch (error) {
        if (error instanceof BridgeError) throw error;
        if (signal.aborted) throw new BridgeError('store.stopped', `stopped while waiting for PostgreSQL (store.url): ${describeError(error)}`, { retryable: true, cause: error });
        if (!isUnavailable(error) || clock.now() >= deadline) {
          const unavailable = isUnavailable(error);
          throw new BridgeError(unavailable ? 'store.unavailable' : 'store.failed', `cannot open the PostgreSQL store (store.url): ${describeError(error)}${fixFor(error, options.url)}`, { retryable: unavailable, cause: error });
        }
        if (attempt === 1) log.warn({ err: describeError(error) }, `PostgreSQL does not answer yet; waiting up to ${Math.round(waitMs / 1000)} s`);
        await clock.sleep(1000, signal).catch(() => {});
      }
    }
  }

  /**
   * Opens again the connections of those granted at start that broke (a database restart drops every
   * idle one), in the background: otherwise the next poll cycle's burst would open them while the
   * webhooks beside it wait (docs/store.md, "The pool").
   */
  function topUp(): void {
    if (!pool || topping || pool.totalCount >= granted) return;
    topping = fillPool(pool, granted).then(({ missing, error }) => {
      if (missing > 0) log.debug({ err: describeError(error), missing }, 'the pool could not open again all of its connections; they are opened when needed');
    }).finally(() => (topping = undefined));
  }

  /**
   * Opens the pool's connections at start. Some refused for now (max_connections reached by others)
   * are opened when needed. Refused by a connection limit (SQLSTATE 53300), they would be refused
   * then too, and a call would fail instead of waiting for a connection: the pool then keeps to
   * those it got, if they are enough to run on.
   */
  async function fill(pool: pg.Pool, size: number): Promise<void> {
    const filled = await fillPool(pool, size);
    granted = size - filled.missing;
    if (filled.missing === 0) return;
    if ((filled.error as { code?: unknown } | undefined)?.code !== TOO_MANY_CONNECTIONS) {
      log.warn({ err: describeError(filled.error), missing: filled.missing, poolSize: size },
        `${filled.missing} of the store's ${size} connections (store.poolSize) could not be opened at start; they are opened when needed`);
      return;
    }
    const { error = filled.error } = await fillOneByOne(pool, size);
    granted = pool.totalCount;
    if (granted < LEAST_CONNECTIONS) {
      throw new BridgeError('store.failed', `the PostgreSQL store lets this process open only ${granted} of its ${size} connections (store.poolSize; ${describeError(error)}): `
        + `it needs ${LEAST_CONNECTIONS} besides its listener, as a poll cycle holds one per stream; raise the role's CONNECTION LIMIT or the server's max_connections, or run fewer replicas`);
    }
    pool.options.max = granted;
    pool.options.min = granted;
    log.warn({ err: describeError(error), missing: size - granted, poolSize: size },
      `${size - granted} of the store's ${size} connections (store.poolSize) could not be opened at start (a connection limit): it runs on the ${granted} it got`);
  }

  /** When this replica's last heartbeat that reached the database was taken (epoch ms). */
  let lastBeatAt = -Infinity;
  /** Since when the store has written without a failure (epoch ms; Infinity while it cannot): see createPgRoles. */
  let writableSince = Infinity;
  health.on((state) => {
    if (!state.ok) writableSince = Infinity;
    else if (writableSince === Infinity) writableSince = clock.now();
  });
  const beatNow = async (at?: string) => {
    const now = clock.now();
    await store.replicas.beat(now, at);
    lastBeatAt = Math.max(lastBeatAt, now);
  };

  const store: Store = {
    name: 'store',
    engine: 'postgres',
    shared: true,
    replicaId: self.id,
    roles: createPgRoles(self.id, calls.statement, (now) => now - writableSince >= REPLICA_TTL_MS),
    watch: (watcher) => listener.on(watcher),
    ...pgPortMethods(calls, self, clock, () => url),
    snapshot,
    health: () => (open ? health.current() : { ok: false, reason: 'store not open', since: self.startedAt }),
    onHealth: (listener) => health.on(listener),
    leasesStand: (now) => now - lastBeatAt < OWN_LEASES_MS,
    async advertise(at) {
      url = at;
      await beatNow(at);
    },
    cancel() {
      starting?.abort();
    },
    async start() {
      if (open) return;
      const size = options.poolSize ?? 10;
      pool = createPool(options.url, size);
      // An idle connection that breaks (the server restarted) is dropped: the heartbeat opens it again
      // (topUp), or a call that finds no idle one. A restart breaks them all at once: one warning for
      // the burst, the others at debug level.
      pool.on('error', (error) => {
        const now = clock.now();
        const burst = now - brokeWarnedAt < BROKE_WARN_MS;
        if (!burst) brokeWarnedAt = now;
        log[burst ? 'debug' : 'warn']({ err: describeError(error) }, 'a PostgreSQL connection broke');
      });
      starting = new AbortController();
      try {
        await connect(starting.signal);
      } catch (error) {
        await pool.end().catch(() => {});
        pool = undefined;
        throw error;
      } finally {
        starting = undefined;
      }
      // The listener connects before the pool fills: at the server's connection limit a pool a
      // connection short still serves every call, while a replica that cannot listen hears of the
      // others' changes only by looking every few seconds. A first attempt that hangs delays start-up by
      // LISTEN_FIRST_MS at most; it goes on in the background.
      const bound = new AbortController();
      await Promise.race([listener.start(), clock.sleep(LISTEN_FIRST_MS, bound.signal).catch(() => {})]);
      bound.abort();
      try {
        if (options.fillAtStart !== false) await fill(pool, size);
        open = true;
        await beatNow();
        writableSince = Math.min(writableSince, clock.now());
      } catch (error) {
        await listener.stop();
        await pool.end().catch(() => {});
        pool = undefined;
        open = false;
        throw error;
      }
      const beat = async () => {
        await beatNow();
        topUp();
      };
      heartbeat = startHeartbeat({ beat, health, clock, log, intervalMs: options.heartbeatMs ?? 5000 });
      log.info({ engine: 'postgres', replica: self.id }, 'store opened');
    },
    async stop() {
      if (!open) return;
      await heartbeat?.stop();
      await staging.releaseAll();
      await calls.write(async (db) => {
        await releaseAll(db, self.id);
        await state.leave(db, self.id);
      }).catch(() => {});
      // The others learn at once that this replica's roles are free.
      await notifier.flush();
      await listener.stop();
      open = false;
      await statistics.idle();
      await topping;
      await pool?.end();
      pool = undefined;
    },
  };
  return store;
}
