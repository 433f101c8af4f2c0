import type Database from 'better-sqlite3';
import type { Person } from '../history-port.js';
import { toPerson, type PersonRow } from '../history-rows.js';
import { PERSON_FIELDS, fieldPath, foldText, indexPerson, type PersonField } from '../people-fields.js';
import type { SnapshotStream } from '../port.js';
import { snapshotTable } from '../tables.js';
import { version } from './snapshot.js';
import { sql } from './statements.js';

/**
 * The name index on SQLite (the port's PeopleStore): a row per person of the snapshot with the name
 * shown and the folded text a search looks in. It follows the snapshot by itself, apart from the poll:
 * a refresh walks the snapshot in key order a bounded stretch at a time (`after`, kept in
 * `person_meta`), rewrites the rows whose chain moved, drops the people of the stretch who are gone
 * from it, and at the end of a walk marks the snapshot version it has caught up with. Once caught
 * up, it follows the people a cycle's apply marked (people-follow.ts) a bounded number at a time,
 * and walks again only after a change it was not caught up for (a first cycle, a change during a
 * walk). A poll cycle pays only for marking the people it changed. Every step is bounded, the last
 * one too: the database thread runs it between webhooks' commits, which wait for it.
 */
type Db = Database.Database;

interface Meta {
  version: number | null;
  pass_version: number | null;
  after: number | null;
}

const FIELDS_SQL = (stream: SnapshotStream) =>
  PERSON_FIELDS.map((field) => `json_extract(s.body, '$.${fieldPath(stream, field).join('.')}') AS ${field}`).join(', ');

export function refresh(db: Db, stream: SnapshotStream, limit: number): boolean {
  const current = version(db, stream);
  const meta = (sql(db, 'SELECT version, pass_version, after FROM person_meta WHERE stream = ?').get(stream) as Meta | undefined)
    ?? { version: null, pass_version: null, after: null };
  // Caught up with the snapshot: only the people a cycle marked since are left (people-follow.ts).
  if (meta.version === current) return followMarked(db, stream, limit);
  const pass = meta.pass_version === current ? meta.pass_version : current;
  const after = meta.pass_version === current ? meta.after : null;
  const table = snapshotTable(stream);
  // The walk's end: the key `limit` rows on, or the end of the table.
  const upto = sql(db, `SELECT key FROM ${table} WHERE key > ? ORDER BY key LIMIT 1 OFFSET ?`).pluck().get(after ?? -Infinity, Math.max(1, limit) - 1) as number | undefined;
  const stale = sql(db, `SELECT s.key, s.chain, ${FIELDS_SQL(stream)} FROM ${table} s
    WHERE s.key > ? AND s.key <= ? AND NOT EXISTS (SELECT 1 FROM person p WHERE p.stream = ? AND p.key = s.key AND p.chain = s.chain)`)
    .all(after ?? -Infinity, upto ?? Infinity, stream) as StaleRow[];
  put(db, stream, stale);
  sql(db, `DELETE FROM person WHERE stream = ? AND key > ? AND key <= ? AND NOT EXISTS (SELECT 1 FROM ${table} s WHERE s.key = person.key)`)
    .run(stream, after ?? -Infinity, upto ?? Infinity);
  if (upto !== undefined) {
    sql(db, `INSERT INTO person_meta (stream, version, pass_version, after) VALUES (?, ?, ?, ?)
      ON CONFLICT (stream) DO UPDATE SET pass_version = excluded.pass_version, after = excluded.after`).run(stream, meta.version, pass, upto);
    return true;
  }
  sql(db, `INSERT INTO person_meta (stream, version, pass_version, after) VALUES (?, ?, NULL, NULL)
    ON CONFLICT (stream) DO UPDATE SET version = excluded.version, pass_version = NULL, after = NULL`).run(stream, pass);
  return false;
}

type StaleRow = { key: number; chain: string } & Partial<Record<PersonField, unknown>>;

function put(db: Db, stream: SnapshotStream, stale: readonly StaleRow[]): void {
  const upsert = sql(db, `INSERT INTO person (stream, key, chain, user_id, name, email, search) VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (stream, key) DO UPDATE SET chain = excluded.chain, user_id = excluded.user_id, name = excluded.name, email = excluded.email, search = excluded.search`);
  for (const row of stale) {
    const { person, search } = indexPerson(stream, row.key, row.chain, row);
    upsert.run(stream, person.key, person.chain, person.userId ?? null, person.name, person.email ?? null, search);
  }
}

/** The marked people (a JSON list of keys) whose chain the index does not hold, with their fields. */
export const MARKED = (stream: SnapshotStream) => `SELECT s.key, s.chain, ${FIELDS_SQL(stream)} FROM ${snapshotTable(stream)} s
  WHERE s.key IN (SELECT value FROM json_each(?)) AND NOT EXISTS (SELECT 1 FROM person p WHERE p.stream = ? AND p.key = s.key AND p.chain = s.chain)`;

/** The marked people (stream, a JSON list of keys) gone from the snapshot. */
export const MARKED_GONE = (stream: SnapshotStream) =>
  `DELETE FROM person WHERE stream = ? AND key IN (SELECT value FROM json_each(?)) AND NOT EXISTS (SELECT 1 FROM ${snapshotTable(stream)} s WHERE s.key = person.key)`;

/** Brings up to `limit` marked people up to date and unmarks them; false when none was marked. */
function followMarked(db: Db, stream: SnapshotStream, limit: number): boolean {
  const keys = sql(db, 'SELECT key FROM person_dirty WHERE stream = ? ORDER BY key LIMIT ?').pluck().all(stream, Math.max(1, limit)) as number[];
  if (keys.length === 0) return false;
  const list = JSON.stringify(keys);
  put(db, stream, sql(db, MARKED(stream)).all(list, stream) as StaleRow[]);
  sql(db, MARKED_GONE(stream)).run(stream, list);
  sql(db, 'DELETE FROM person_dirty WHERE stream = ? AND key IN (SELECT value FROM json_each(?))').run(stream, list);
  return true;
}

/** A scan of the index's short rows (no substring index): bounded by `limit` matches. */
export function search(db: Db, query: { text?: string; id?: number }, limit: number): Person[] {
  const text = query.text === undefined ? '' : foldText(query.text).trim();
  if (text === '' && query.id === undefined) return [];
  const rows = sql(db, `SELECT stream, key, chain, user_id, name, email FROM person
    WHERE (? <> '' AND instr(search, ?) > 0) OR key = ? OR user_id = ? ORDER BY stream, key LIMIT ?`)
    .all(text, text, query.id ?? null, query.id ?? null, Math.max(0, Math.floor(limit))) as PersonRow[];
  return rows.map(toPerson);
}

export function get(db: Db, refs: readonly { stream: SnapshotStream; key: number }[]): Person[] {
  const one = sql(db, 'SELECT stream, key, chain, user_id, name, email FROM person WHERE stream = ? AND key = ?');
  return refs.map((ref) => one.get(ref.stream, ref.key) as PersonRow | undefined).filter((r): r is PersonRow => r !== undefined).map(toPerson);
}
