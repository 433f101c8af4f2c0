import type { Key, KeyType } from '../../streams/index.js';
import type { SnapshotStream } from '../port.js';
import { keyTypeOf, SNAPSHOT_STREAMS, snapshotTable } from '../tables.js';
import type { Db } from './db.js';

/**
 * Each polled stream's snapshot table is a migration of its own (docs/store.md "Streams"), made from
 * the stream's description (src/streams/) and recorded by name in `stream_migration`, inside the
 * migrations' transaction and lock: a stream added to the registry adds its table and its
 * `snapshot_meta` row at the next start and changes no other. `IF NOT EXISTS`, because the students'
 * and users' tables of a database older than these migrations came with its first one.
 */
const STREAM_VERSION = 1;

/** A key column of the stream's type; text keys sort bytewise (`"C"`), as the daemon orders them (src/streams/key.ts). */
const KEY_COLUMN: Readonly<Record<KeyType, string>> = { integer: 'bigint', string: 'text COLLATE "C"' };

/** The SQL type of a stream's keys, for a parameter's cast. */
export const keySql = (stream: SnapshotStream): string => (keyTypeOf(stream) === 'integer' ? 'bigint' : 'text');

/** The column definition of a stream's key. */
export const keyColumn = (stream: SnapshotStream): string => KEY_COLUMN[keyTypeOf(stream)];

/** Below every key of the stream: where a walk from the start begins. */
export const keyFloor = (stream: SnapshotStream): Key => (keyTypeOf(stream) === 'integer' ? Number.MIN_SAFE_INTEGER : '');

/** The columns every stream's keys share: a created change's row (`outbox_record`) and a range's bounds (`outbox_range`). */
export type SharedKeyColumn = 'snapshot_key' | 'after' | 'upto' | 'claimed_to';

/** Where a stream's keys go in a shared column: the integer column, or its text twin (`snapshot_text_key`, `after_text`, …). */
export const sharedKey = (stream: SnapshotStream, column: SharedKeyColumn): string =>
  keyTypeOf(stream) === 'integer' ? column : column === 'snapshot_key' ? 'snapshot_text_key' : `${column}_text`;

export async function migrateStreams(db: Pick<Db, 'query'>): Promise<void> {
  const { rows } = await db.query<{ stream: string }>('SELECT stream FROM stream_migration');
  const done = new Set(rows.map((r) => r.stream));
  for (const stream of SNAPSHOT_STREAMS) {
    if (done.has(stream)) continue;
    await db.query(`CREATE TABLE IF NOT EXISTS ${snapshotTable(stream)} (key ${keyColumn(stream)} PRIMARY KEY, chain text NOT NULL, body text NOT NULL, raw_hash text)`);
    await db.query('INSERT INTO snapshot_meta (stream) VALUES ($1) ON CONFLICT (stream) DO NOTHING', [stream]);
    await db.query('INSERT INTO stream_migration (stream, version) VALUES ($1, $2)', [stream, STREAM_VERSION]);
  }
}
