import type Database from 'better-sqlite3';
import type { KeyType } from '../../streams/index.js';
import { keyTypeOf, SNAPSHOT_STREAMS, snapshotTable } from '../tables.js';
import { sql } from './statements.js';

/**
 * Each polled stream's snapshot table is a migration of its own (docs/store.md "Streams"), made from
 * the stream's description (src/streams/) and recorded by name in `stream_migration`: a stream added
 * to the registry adds its table at the next start and changes no other. `IF NOT EXISTS`, because
 * the students' and users' tables of a database older than these migrations came with its first one.
 */
type Db = Database.Database;

/** A key column of the stream's type: an INTEGER primary key is the rowid, so rows are kept in key order. */
export const KEY_COLUMN: Readonly<Record<KeyType, string>> = { integer: 'INTEGER', string: 'TEXT' };

/** The columns of a snapshot table (and of a fresh snapshot staged for one). */
export const rowColumns = (type: KeyType) => `key ${KEY_COLUMN[type]} PRIMARY KEY, chain TEXT NOT NULL, body TEXT NOT NULL, raw_hash TEXT`;

/** The stream's migrations; only the first, its table, so far. */
const STREAM_VERSION = 1;

export function migrateStreams(db: Db): void {
  const done = new Set(sql(db, 'SELECT stream FROM stream_migration').pluck().all() as string[]);
  for (const stream of SNAPSHOT_STREAMS) {
    if (done.has(stream)) continue;
    db.transaction(() => {
      db.exec(`CREATE TABLE IF NOT EXISTS ${snapshotTable(stream)} (${rowColumns(keyTypeOf(stream))})`);
      sql(db, 'INSERT INTO stream_migration (stream, version) VALUES (?, ?)').run(stream, STREAM_VERSION);
    })();
  }
}
