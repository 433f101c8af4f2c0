import pg from 'pg';
import { inject } from 'vitest';
import { REPLICA_TTL_MS } from '../../src/store/tables.js';

let made = 0;

/** Runs `body` on a connection of its own to `url` (a test's look past the store), closed after it. */
export async function withClient<T>(url: string, body: (client: pg.Client) => Promise<T>, options: Omit<pg.ClientConfig, 'connectionString'> = {}): Promise<T> {
  const client = new pg.Client({ ...options, connectionString: url });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}

/** A new, empty database on the test run's PostgreSQL (global-setup.ts); returns its URL. */
export async function testDatabase(prefix = 'sb'): Promise<string> {
  const server = new URL(inject('postgresUrl'));
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}_${(made += 1)}`;
  await withClient(server.toString(), (client) => client.query(`CREATE DATABASE ${name}`));
  server.pathname = `/${name}`;
  return server.toString();
}

/**
 * Makes the replica that ran as process `pid` look as it does once REPLICA_TTL_MS has passed since
 * its last heartbeat: for a test of what survives a kill -9, not of how long finding it dead takes
 * (test/replicas-roles.test.ts waits that out with the real clock).
 */
export async function ageDeadReplica(url: string, pid: number): Promise<void> {
  const { rowCount } = await withClient(url, (client) =>
    client.query('UPDATE schoolbridge.replica SET heartbeat_at = heartbeat_at - $1 WHERE pid = $2', [REPLICA_TTL_MS, pid]));
  if (!rowCount) throw new Error(`no replica row of process ${pid}`);
}
