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
 * A new database and a login role of its own (password `x`, what `setup` grants it or makes for
 * it), with the role's URL: a test of what the store does for a role with fewer rights than its
 * owner's, or a connection limit.
 */
export async function roleDatabase(prefix: string, setup: (admin: pg.Client, role: string) => Promise<unknown> = async () => {}, limit?: number): Promise<{ url: string; admin: string; role: string; database: string }> {
  const admin = await testDatabase(prefix);
  const role = `${prefix}_${process.pid}`;
  const database = await withClient(admin, async (client) => {
    await client.query(`CREATE ROLE ${role} LOGIN PASSWORD 'x'${limit === undefined ? '' : ` CONNECTION LIMIT ${limit}`}`);
    await setup(client, role);
    return client.database!;
  });
  const url = new URL(admin);
  url.username = role;
  url.password = 'x';
  return { url: url.toString(), admin, role, database };
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
