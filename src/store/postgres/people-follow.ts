import { polledStream } from '../../streams/index.js';
import type { Key, SnapshotStream } from '../port.js';
import type { Db } from './db.js';

/**
 * sqlite/people-follow.ts on PostgreSQL, in the apply's transaction. Its UPDATE waits for a refresh
 * that holds the stream's `person_meta` row (people.ts): a refresh never reads marks that a later
 * apply's commit would add to or take for its own.
 */
export async function followPeople(db: Db, stream: SnapshotStream, version: number, keys: readonly Key[]): Promise<void> {
  if (!polledStream(stream).person) return;
  const moved = await db.query('UPDATE person_meta SET version = $2 WHERE stream = $1 AND version = $3 AND pass_version IS NULL', [stream, version, version - 1]);
  if (moved.rowCount === 0 || keys.length === 0) return;
  await db.query('INSERT INTO person_dirty (stream, key) SELECT $1, unnest($2::bigint[]) ON CONFLICT DO NOTHING', [stream, keys]);
}
