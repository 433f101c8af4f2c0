import pg from 'pg';
import { inject } from 'vitest';
import { REPLICA_TTL_MS } from '../../src/store/tables.js';

let made = 0;

/** A new, empty database on the test run's PostgreSQL (global-setup.ts); returns its URL. */
export async function testDatabase(prefix = 'sb'): Promise<string> {
  const server = new URL(inject('postgresUrl'));
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}_${(made += 1)}`;
  const client = new pg.Client({ connectionString: server.toString() });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  server.pathname = `/${name}`;
  return server.toString();
}

/**
 * Makes the replica that ran as process `pid` look as it does once REPLICA_TTL_MS has passed since
 * its last heartbeat: for a test of what survives a kill -9, not of how long finding it dead takes
 * (test/replicas-roles.test.ts waits that out with the real clock).
 */
export async function ageDeadReplica(url: string, pid: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rowCount } = await client.query('UPDATE schoolbridge.replica SET heartbeat_at = heartbeat_at - $1 WHERE pid = $2', [REPLICA_TTL_MS, pid]);
    if (!rowCount) throw new Error(`no replica row of process ${pid}`);
  } finally {
    await client.end();
  }
}
