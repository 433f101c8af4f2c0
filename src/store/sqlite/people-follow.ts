import type Database from 'better-sqlite3';
import { polledStream } from '../../streams/index.js';
import type { Key, SnapshotStream } from '../port.js';
import { sql } from './statements.js';

/**
 * Called by a cycle's apply in its own transaction, once the stream's snapshot is at `version`: if
 * the name index had caught up with the version before (people.ts), it is at this one too but for
 * the people of `keys`, which are marked for it to follow. Otherwise nothing is marked, and the
 * index walks the whole snapshot as it would have anyway: every version it takes for caught up has
 * had each of its changed people marked.
 */
export function followPeople(db: Database.Database, stream: SnapshotStream, version: number, keys: readonly Key[]): void {
  if (!polledStream(stream).person) return;
  const moved = sql(db, 'UPDATE person_meta SET version = ? WHERE stream = ? AND version = ? AND pass_version IS NULL').run(version, stream, version - 1);
  if (moved.changes === 0 || keys.length === 0) return;
  const mark = sql(db, 'INSERT INTO person_dirty (stream, key) VALUES (?, ?) ON CONFLICT DO NOTHING');
  for (const key of keys) mark.run(stream, key);
}
