import type { Key, KeyType } from '../../streams/index.js';
import { parseKey } from '../../streams/index.js';
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

/** The SQL type a stream's keys are cast to, from a parameter or from the text of a shared column. */
export const keySql = (stream: SnapshotStream): string => (keyTypeOf(stream) === 'integer' ? 'bigint' : 'text');

/** The column definition of a stream's key. */
export const keyColumn = (stream: SnapshotStream): string => KEY_COLUMN[keyTypeOf(stream)];

/** Below every key of the stream: where a walk from the start begins. */
export const keyFloor = (stream: SnapshotStream): Key => (keyTypeOf(stream) === 'integer' ? Number.MIN_SAFE_INTEGER : '');

/** A key kept as text in a column shared by the streams (`outbox_record.snapshot_key`, a range's bounds), in its stream's type. */
export const keyFromText = (stream: SnapshotStream, text: string): Key => parseKey(keyTypeOf(stream), text);

export async function migrateStreams(db: Db): Promise<void> {
  const { rows } = await db.query<{ stream: string }>('SELECT stream FROM stream_migration');
  const done = new Set(rows.map((r) => r.stream));
  for (const stream of SNAPSHOT_STREAMS) {
    if (done.has(stream)) continue;
    await db.query(`CREATE TABLE IF NOT EXISTS ${snapshotTable(stream)} (key ${keyColumn(stream)} PRIMARY KEY, chain text NOT NULL, body text NOT NULL, raw_hash text)`);
    await db.query('INSERT INTO snapshot_meta (stream) VALUES ($1) ON CONFLICT (stream) DO NOTHING', [stream]);
    await db.query('INSERT INTO stream_migration (stream, version) VALUES ($1, $2)', [stream, STREAM_VERSION]);
  }
}
