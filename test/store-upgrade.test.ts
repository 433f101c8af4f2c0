import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../src/store/index.js';
import { createPool } from '../src/store/postgres/db.js';
import { createPgStore } from '../src/store/postgres/pg-store.js';
import { migrate as migratePg } from '../src/store/postgres/schema.js';
import { openDatabase } from '../src/store/sqlite/handles.js';
import { migrate as migrateSqlite } from '../src/store/sqlite/schema.js';
import { createSqliteStore, DATABASE_FILE } from '../src/store/sqlite/sqlite-store.js';
import { freshRows } from '../src/store/conformance.js';
import { testDatabase } from './support/pg-database.js';
import { tempDir } from './support/temp.js';

/**
 * A database an older schoolbridge left (SQLite schema 2, PostgreSQL 3: the students' and users'
 * tables made by the first migration, keys in integer columns everywhere) opened by this one: the
 * streams' migrations add the groups table and change no other, and what the database held reads as
 * before, with integer keys: a first cycle's range half delivered, and a created change made a row.
 */
const log = pino({ level: 'silent' });
const NOW = Date.parse('2100-01-01T00:00:00Z');
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What the older database holds, in its own SQL (`?` becomes `$n` on PostgreSQL). */
const OLD_ROWS: [string, unknown[]][] = [
  ['INSERT INTO snapshot_students (key, chain, body, raw_hash) VALUES (?, ?, ?, ?), (?, ?, ?, ?), (?, ?, ?, ?)',
    [1, 'c00000000001', '{"id":1}', 'h1', 2, 'c00000000002', '{"id":2}', 'h2', 3, 'c00000000003', '{"id":3}', 'h3']],
  ['UPDATE snapshot_meta SET version = 1, rows = 3 WHERE stream = ?', ['students']],
  ['INSERT INTO outbox_range (connector, stream, detected_at, after, upto, remaining, enqueued_at, run_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ['a', 'students', 'T0', 1, 3, 2, NOW, NOW]],
  ['INSERT INTO outbox_record (id, pending, snapshot_stream, snapshot_key, snapshot_chain, detected_at) VALUES (?, ?, ?, ?, ?, ?)',
    ['students:1:c00000000001', 1, 'students', 1, 'c00000000001', 'T0']],
  [`INSERT INTO outbox_delivery (id, connector, record_id, stream, order_key, status, enqueued_at, run_at) VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)`,
    ['b:students:1:c00000000001', 'b', 'students:1:c00000000001', 'students', 'students:1', NOW, NOW]],
];

async function olderSqlite(): Promise<Store> {
  const { dir, cleanup } = await tempDir('sb-upgrade-');
  cleanups.push(cleanup);
  const db = openDatabase(path.join(dir, DATABASE_FILE));
  migrateSqlite(db, 2);
  db.exec(`CREATE TABLE snapshot_students (key INTEGER PRIMARY KEY, chain TEXT NOT NULL, body TEXT NOT NULL, raw_hash TEXT);
    CREATE TABLE snapshot_users (key INTEGER PRIMARY KEY, chain TEXT NOT NULL, body TEXT NOT NULL, raw_hash TEXT);
    INSERT INTO snapshot_meta (stream) VALUES ('students'), ('users');`);
  for (const [text, values] of OLD_ROWS) db.prepare(text).run(...values);
  db.close();
  return createSqliteStore({ dir, log });
}

async function olderPostgres(): Promise<Store> {
  const url = await testDatabase('upgrade');
  const pool = createPool(url, 2);
  try {
    await migratePg(pool, 3);
    await pool.query(`CREATE TABLE snapshot_students (key bigint PRIMARY KEY, chain text NOT NULL, body text NOT NULL, raw_hash text);
      CREATE TABLE snapshot_users (key bigint PRIMARY KEY, chain text NOT NULL, body text NOT NULL, raw_hash text);
      INSERT INTO snapshot_meta (stream) VALUES ('students'), ('users');`);
    for (const [text, values] of OLD_ROWS) {
      let n = 0;
      await pool.query(text.replace(/\?/g, () => `$${(n += 1)}`), values);
    }
  } finally {
    await pool.end();
  }
  return createPgStore({ url, log });
}

describe.each([['sqlite', olderSqlite], ['postgres', olderPostgres]] as const)('a %s store an older version left', (_engine, older) => {
  it('gains the groups table and reads what it held as before', async () => {
    const store = await older();
    await store.start();
    cleanups.push(() => store.stop());
    expect((await store.snapshot.scan('students', undefined, 10)).map((r) => r.key)).toEqual([1, 2, 3]);
    const range = await store.outbox.claim({ connector: 'a', limit: 10, now: NOW, leaseMs: 60_000 });
    expect(range.map((c) => [c.created?.key, c.delivery.recordId])).toEqual([[2, 'students:2:c00000000002'], [3, 'students:3:c00000000003']]);
    const [row] = await store.outbox.claim({ connector: 'b', limit: 10, now: NOW, leaseMs: 60_000 });
    expect(row!.created).toMatchObject({ stream: 'students', key: 1, chain: 'c00000000001' });
    expect(Buffer.from(row!.created!.text).toString()).toBe('{"id":1}');
    expect(await store.snapshot.size('groups')).toBe(0);
    await store.snapshot.begin('groups', 'fresh');
    await store.snapshot.stageFresh('groups', freshRows([{ key: 7, chain: 'c00000000007', json: '{"id":7}' }]));
    await store.snapshot.applyFresh('groups', { state: {} });
    expect(await store.snapshot.rows('groups', [7])).toMatchObject([{ key: 7, body: '{"id":7}' }]);
  });
});
