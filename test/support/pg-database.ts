import pg from 'pg';
import { inject } from 'vitest';

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
