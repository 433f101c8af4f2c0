import type pg from 'pg';
import type { Clock } from '../../clock.js';
import { BridgeError, describeError } from '../../errors.js';
import { storeError } from '../errors.js';
import type { HealthState } from '../health.js';
import type { StoreChange } from '../port.js';
import type { StoreTimings } from '../timings.js';
import { prepared, transaction, type Db } from './db.js';

/**
 * How the port's methods run on PostgreSQL: each one transaction on a pooled connection (or one
 * statement), its failure translated to a store error, the store's health kept from what writes find.
 */
export interface PgCalls {
  /** A transaction that writes: its outcome says whether the store can write. */
  write<T>(work: (db: Db) => Promise<T>): Promise<T>;
  /** Statements that only read, outside a transaction. */
  read<T>(work: (db: Db) => Promise<T>): Promise<T>;
  /**
   * A write that need not wait for the disk (claims and settlements): losing the last of them in a
   * crash only means a delivery is made again with the same record id, which a crash between a
   * delivery and its settlement means anyway. Webhooks' and cycles' commits stay durable, and each
   * one makes every commit before it durable too.
   */
  lease<T>(work: (db: Db) => Promise<T>): Promise<T>;
  /** A write of one statement: its own transaction, one round trip. */
  statement<T>(work: (db: Db) => Promise<T>): Promise<T>;
}

/**
 * SQLSTATE classes and socket errors after which the same call can succeed later; 25006: the
 * database is read-only now (a standby, as after a failover, until it is promoted).
 */
const UNAVAILABLE_STATES = /^(08|53|57P|58|40001|40P01|25006)/;
const SOCKET_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH']);

export function isUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown };
  if (typeof e?.code === 'string' && (UNAVAILABLE_STATES.test(e.code) || SOCKET_ERRORS.has(e.code))) return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable/i.test(message);
}

export interface PgCallsOptions {
  pool: () => pg.Pool | undefined;
  isOpen: () => boolean;
  health: HealthState;
  clock: Clock;
  /** Tells the other replicas of a change a call made, once it has committed (notifier.ts). */
  notify: (change: StoreChange) => void;
  /** Counts the deliveries a call added, once it has committed (statistics.ts). */
  grew: (rows: number) => void;
  /** Told how long write transactions and their durable commits take (timings.ts). */
  timings?: StoreTimings | undefined;
}

export function createPgCalls(options: PgCallsOptions): PgCalls {
  const { health, clock } = options;

  /**
   * A write of one statement is a transaction of its own, its commit (and WAL flush) within it. It
   * runs on the pool, so its time also holds the wait for a free connection, which a transaction's
   * (from BEGIN, on the connection it was lent) does not.
   */
  async function timedStatement<T>(work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const value = await work();
    options.timings?.transaction((performance.now() - started) / 1000);
    return value;
  }

  async function run<T>(write: boolean, work: (db: Db) => Promise<T>, inTransaction: boolean, durable = true): Promise<T> {
    const pool = options.pool();
    if (!pool || !options.isOpen()) throw new BridgeError('store.closed', 'the store is not open', { retryable: true });
    const told = new Set<StoreChange>();
    let grown = 0;
    const effects = { tell: (change: StoreChange) => void told.add(change), grew: (rows: number) => void (grown += rows) };
    try {
      const value = inTransaction ? await transaction(pool, work, effects, durable, options.timings)
        : write ? await timedStatement(() => work(prepared(pool, effects))) : await work(prepared(pool, effects));
      if (write) health.succeeded();
      for (const change of told) options.notify(change);
      if (grown > 0) options.grew(grown);
      return value;
    } catch (error) {
      // The store's own refusals (a fenced cycle) say what they are.
      if (error instanceof BridgeError) throw error;
      const unavailable = isUnavailable(error);
      if (unavailable) health.failed(describeError(error), clock.now());
      throw storeError(unavailable, describeError(error), error);
    }
  }

  return {
    write: (work) => run(true, work, true),
    read: (work) => run(false, work, false),
    lease: (work) => run(true, work, true, false),
    statement: (work) => run(true, work, false),
  };
}
