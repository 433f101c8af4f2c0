import pg from 'pg';
import { SCHEMA } from './schema.js';

/** A pool or a client in a transaction: what the PostgreSQL operations run their SQL on. */
export type Db = Pick<pg.PoolClient, 'query'>;

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

export function createPool(url: string, max: number): pg.Pool {
  // Our schema first on every connection (the tables are unqualified in the SQL).
  const pool = new pg.Pool({ connectionString: url, max, types, options: `-c search_path=${SCHEMA}`, connectionTimeoutMillis: 10_000 });
  // A connection that breaks while lent out (the server went down between two statements of a
  // transaction) fails the statement in progress or the next one; the event itself must not end the process.
  pool.on('connect', (client) => client.on('error', () => {}));
  return pool;
}

/**
 * Runs `work` in one transaction on a client of its own. A transaction that is not `durable` commits
 * without waiting for its WAL to reach the disk (`synchronous_commit = off`): a crash may lose its
 * last fraction of a second, never part of it, and any durable commit after it makes it durable too.
 */
export async function transaction<T>(pool: pg.Pool, work: (db: Db) => Promise<T>, durable = true): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query(durable ? 'BEGIN' : 'BEGIN; SET LOCAL synchronous_commit TO OFF');
    const value = await work(client);
    await client.query('COMMIT');
    return value;
  } catch (error) {
    // A client that cannot even roll back has lost its connection: the pool must not lend it again.
    await client.query('ROLLBACK').catch(() => (broken = true));
    throw error;
  } finally {
    client.release(broken);
  }
}
