import { hash } from 'node:crypto';
import pg from 'pg';
import type { StoreChange } from '../port.js';
import type { StoreTimings } from '../timings.js';
import { SCHEMA } from './schema.js';
import { BridgeError } from '../../errors.js';
import { driverUrl, sslFileProblem } from './ssl-mode.js';

type Queryable = Pick<pg.PoolClient, 'query'>;

/** A pool or a client in a transaction: what the PostgreSQL operations run their SQL on. */
export interface Db extends Queryable {
  /**
   * The other replicas are to learn of `change` once this call has committed (notifier.ts); a call
   * that fails tells no one.
   */
  tell(change: StoreChange): void;
  /** This call added `rows` deliveries to the outbox: counted once it has committed (statistics.ts). */
  grew(rows: number): void;
}

/** What a call learns of its own effects while it runs, acted on once it has committed (calls.ts). */
export type Effects = Pick<Db, 'tell' | 'grew'>;

/**
 * bigint columns (epoch milliseconds, sequence numbers, record ids) as numbers: every one of them
 * stays below 2^53.
 */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8 && format !== 'binary') return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

/**
 * Set on every connection of the store. Our schema first (the tables are unqualified in the SQL).
 * `backend_flush_after`: the server asks the kernel to write out what our sessions write to its
 * tables every 256 kB, instead of leaving it in the page cache, where a first cycle's snapshot
 * went to the disk in one burst later on and every commit of the server, webhooks' included,
 * waited behind it (docs/store.md, section "PostgreSQL and the disk").
 */
const SESSION_OPTIONS = `-c search_path=${SCHEMA} -c backend_flush_after=256kB`;

/** How the store's connections show in `pg_stat_activity` (an `application_name` in `store.url` wins). */
export const APPLICATION_NAME = 'schoolbridge';

/**
 * The store's pool: `max` connections, none of them ever closed for being idle (`min` = `max`;
 * pg-pool closes idle ones after 10 s by default). A connection opened on demand costs the server a
 * new process and its start-up, and a poll cycle takes several connections at once: the webhooks
 * that came in as it started waited for new ones (docs/store.md, section "The pool"). `fillPool`
 * opens them all at start.
 */
export function createPool(url: string, max: number): pg.Pool {
  const unreadable = sslFileProblem(url);
  if (unreadable) throw new BridgeError('store.failed', `cannot open the PostgreSQL store: ${unreadable}`);
  const pool = new pg.Pool({
    connectionString: driverUrl(url), max, min: max, types, options: SESSION_OPTIONS, connectionTimeoutMillis: 10_000, application_name: APPLICATION_NAME,
  });
  // A connection that breaks while lent out (the server went down between two statements of a
  // transaction) fails the statement in progress or the next one; the event itself must not end the process.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/**
 * Opens connections until the pool holds `max`, all at once: at start, and again after some broke.
 * One the server refuses now (its `max_connections` reached) is opened later, when a call needs it:
 * this resolves with how many it refused and the first refusal, and never rejects.
 */
export async function fillPool(pool: pg.Pool, max: number): Promise<{ missing: number; error?: unknown }> {
  // One ask per connection not lent out, all in this tick: pg-pool lends its idle connections to the
  // first asks and opens new ones for the others, on the next tick, before any ask has been answered.
  // So each goes back as soon as it is lent, and a call waiting for one meanwhile is not held up
  // until the slowest of them has opened.
  const asks = Math.max(0, max - (pool.totalCount - pool.idleCount));
  const opened = await Promise.allSettled(Array.from({ length: asks }, () => pool.connect().then((client) => client.release())));
  const refused = opened.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  return { missing: refused.length, error: refused[0]?.reason };
}

/**
 * Opens connections one at a time, each held until the last, until the pool holds `max` or the
 * server refuses one: how many a role's or server's connection limit lets this process have, which
 * connections opened all at once undercount (PostgreSQL counts each as it starts, so of several
 * starting together more than the limit's excess may be refused). Resolves with the refusal, if any.
 */
export async function fillOneByOne(pool: pg.Pool, max: number): Promise<{ error?: unknown }> {
  const held: pg.PoolClient[] = [];
  try {
    // Called at start, before any call runs: every client is this one's to hold.
    while (held.length < max) held.push(await pool.connect());
    return {};
  } catch (error) {
    return { error };
  } finally {
    for (const client of held) client.release();
  }
}

/**
 * Runs `work` in one transaction on a client of its own. A transaction that is not `durable` commits
 * without waiting for its WAL to reach the disk (`synchronous_commit = off`): a crash may lose its
 * last fraction of a second, never part of it, and any durable commit after it makes it durable too.
 * `timings` hears how long it ran from BEGIN to COMMIT's answer, and, when durable, how long COMMIT
 * took: PostgreSQL answers it once the transaction's WAL is flushed.
 */
export async function transaction<T>(pool: pg.Pool, work: (db: Db) => Promise<T>, effects: Effects, durable = true, timings?: StoreTimings): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    const started = performance.now();
    await client.query(durable ? 'BEGIN' : 'BEGIN; SET LOCAL synchronous_commit TO OFF');
    const value = await work(prepared(client, effects));
    const committing = performance.now();
    await client.query('COMMIT');
    const ended = performance.now();
    timings?.transaction((ended - started) / 1000);
    if (durable) timings?.sync((ended - committing) / 1000);
    return value;
  } catch (error) {
    // A client that cannot even roll back has lost its connection: the pool must not lend it again.
    await client.query('ROLLBACK').catch(() => (broken = true));
    throw error;
  } finally {
    client.release(broken);
  }
}

const names = new Map<string, string>();

/**
 * The same SQL with parameters is a named prepared statement: parsed and planned once per
 * connection, not at every call, which for the small statements of a webhook or a delivery costs
 * PostgreSQL more than running them. Every such text is a constant of the store's code (values
 * travel as parameters, never in the text), so the statements a connection keeps are bounded. SQL
 * without parameters (DDL, BEGIN) goes as it is.
 */
export function prepared(db: Queryable, effects: Effects): Db {
  const query = (text: unknown, values?: unknown) => {
    if (typeof text !== 'string' || !Array.isArray(values)) return db.query(text as never, values as never);
    let name = names.get(text);
    if (name === undefined) names.set(text, (name = `sb_${hash('sha1', text, 'hex').slice(0, 24)}`));
    return db.query({ name, text, values });
  };
  return { query, ...effects } as Db;
}
