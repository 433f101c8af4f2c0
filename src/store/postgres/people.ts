import type { Person } from '../history-port.js';
import { toPerson, type PersonRow } from '../history-rows.js';
import { PERSON_FIELDS, fieldPath, foldText, indexPerson, type PersonField } from '../people-fields.js';
import type { SnapshotStream } from '../port.js';
import { snapshotTable } from '../tables.js';
import type { Db } from './db.js';
import { version } from './snapshot.js';

/**
 * The name index on PostgreSQL: the walk of sqlite/people.ts, one stretch per transaction, and then
 * the people a cycle marked, a bounded number per transaction. Replicas refreshing at once take
 * turns on the stream's `person_meta` row (FOR UPDATE), so each stretch or mark is taken once and the
 * second finds it done.
 */
interface Meta {
  version: number | null;
  pass_version: number | null;
  after: number | null;
}

const FIELDS_SQL = (stream: SnapshotStream) =>
  PERSON_FIELDS.map((field) => `j #>> '{${fieldPath(stream, field).join(',')}}' AS "${field}"`).join(', ');

/**
 * The rows of a stretch ($1, $2] whose chain the index does not hold, with the fields a person is
 * made of. Each side is bounded by the stretch, `person` too: right after a first cycle the planner
 * has no statistics of `person` yet, takes it for a few rows, and would hash all of a stream's
 * people for every stretch, which makes a walk quadratic in the size of the school. The body is
 * made JSON once per stale row: OFFSET 0 keeps the subquery from being folded into the select list,
 * where each field would make it again.
 */
export const STALE = (stream: SnapshotStream) => `SELECT s.key, s.chain, ${FIELDS_SQL(stream)}
  FROM (SELECT t.key, t.chain, t.body::jsonb AS j FROM ${snapshotTable(stream)} t
    WHERE t.key > $1 AND t.key <= $2
      AND NOT EXISTS (SELECT 1 FROM person p WHERE p.stream = $3 AND p.key > $1 AND p.key <= $2 AND p.key = t.key AND p.chain = t.chain)
    OFFSET 0) s`;

export async function refresh(db: Db, stream: SnapshotStream, limit: number): Promise<boolean> {
  await db.query('INSERT INTO person_meta (stream) VALUES ($1) ON CONFLICT (stream) DO NOTHING', [stream]);
  const { rows: [meta] } = await db.query<Meta>('SELECT version, pass_version, after FROM person_meta WHERE stream = $1 FOR UPDATE', [stream]);
  const current = await version(db, stream);
  // Caught up with the snapshot: only the people a cycle marked since are left (people-follow.ts).
  if (meta!.version === current) return followMarked(db, stream, limit);
  const after = meta!.pass_version === current ? meta!.after : null;
  const table = snapshotTable(stream);
  const low = after ?? Number.MIN_SAFE_INTEGER;
  const { rows: [end] } = await db.query<{ key: number }>(`SELECT key FROM ${table} WHERE key > $1 ORDER BY key LIMIT 1 OFFSET $2`, [low, Math.max(1, limit) - 1]);
  const { rows: stale } = await db.query<StaleRow>(STALE(stream),
    [low, end?.key ?? Number.MAX_SAFE_INTEGER, stream]);
  await put(db, stream, stale);
  await db.query(`DELETE FROM person p WHERE p.stream = $1 AND p.key > $2 AND p.key <= $3
      AND NOT EXISTS (SELECT 1 FROM ${table} s WHERE s.key > $2 AND s.key <= $3 AND s.key = p.key)`,
    [stream, low, end?.key ?? Number.MAX_SAFE_INTEGER]);
  if (end) {
    await db.query('UPDATE person_meta SET pass_version = $2, after = $3 WHERE stream = $1', [stream, current, end.key]);
    return true;
  }
  await db.query('UPDATE person_meta SET version = $2, pass_version = NULL, after = NULL WHERE stream = $1', [stream, current]);
  return false;
}

type StaleRow = { key: number; chain: string } & Partial<Record<PersonField, string | null>>;

async function put(db: Db, stream: SnapshotStream, stale: readonly StaleRow[]): Promise<void> {
  if (stale.length === 0) return;
  const people = stale.map((row) => indexPerson(stream, row.key, row.chain, row));
  await db.query(`INSERT INTO person (stream, key, chain, user_id, name, email, search)
    SELECT $1, key, chain, user_id, name, email, search FROM json_to_recordset($2::json) AS t(key bigint, chain text, user_id bigint, name text, email text, search text)
    ON CONFLICT (stream, key) DO UPDATE SET chain = excluded.chain, user_id = excluded.user_id, name = excluded.name, email = excluded.email, search = excluded.search`,
  [stream, JSON.stringify(people.map(({ person, search }) => ({ key: person.key, chain: person.chain, user_id: person.userId ?? null, name: person.name, email: person.email ?? null, search })))]);
}

/**
 * The marked rows ($1) whose chain the index does not hold, as STALE gives a stretch's: both sides
 * looked up by the keys, `person` too, for the reason STALE says.
 */
export const MARKED = (stream: SnapshotStream) => `SELECT s.key, s.chain, ${FIELDS_SQL(stream)}
  FROM (SELECT t.key, t.chain, t.body::jsonb AS j FROM ${snapshotTable(stream)} t
    WHERE t.key = ANY($1::bigint[])
      AND NOT EXISTS (SELECT 1 FROM person p WHERE p.stream = $2 AND p.key = ANY($1::bigint[]) AND p.key = t.key AND p.chain = t.chain)
    OFFSET 0) s`;

/** Brings up to `limit` marked people up to date and unmarks them; false when none was marked. */
async function followMarked(db: Db, stream: SnapshotStream, limit: number): Promise<boolean> {
  const { rows } = await db.query<{ key: number }>('SELECT key FROM person_dirty WHERE stream = $1 ORDER BY key LIMIT $2', [stream, Math.max(1, limit)]);
  if (rows.length === 0) return false;
  const keys = rows.map((r) => r.key);
  await put(db, stream, (await db.query<StaleRow>(MARKED(stream), [keys, stream])).rows);
  await db.query(`DELETE FROM person p WHERE p.stream = $1 AND p.key = ANY($2::bigint[])
      AND NOT EXISTS (SELECT 1 FROM ${snapshotTable(stream)} s WHERE s.key = ANY($2::bigint[]) AND s.key = p.key)`, [stream, keys]);
  await db.query('DELETE FROM person_dirty WHERE stream = $1 AND key = ANY($2::bigint[])', [stream, keys]);
  return true;
}

export async function search(db: Db, query: { text?: string; id?: number }, limit: number): Promise<Person[]> {
  const text = query.text === undefined ? '' : foldText(query.text).trim();
  if (text === '' && query.id === undefined) return [];
  const { rows } = await db.query<PersonRow>(`SELECT stream, key, chain, user_id, name, email FROM person
    WHERE ($1 <> '' AND strpos(search, $1) > 0) OR key = $2 OR user_id = $2 ORDER BY stream, key LIMIT $3`,
  [text, query.id ?? null, Math.max(0, Math.floor(limit))]);
  return rows.map(toPerson);
}

export async function get(db: Db, refs: readonly { stream: SnapshotStream; key: number }[]): Promise<Person[]> {
  if (refs.length === 0) return [];
  const { rows } = await db.query<PersonRow>(`SELECT p.stream, p.key, p.chain, p.user_id, p.name, p.email
    FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS r(stream, key, n) JOIN person p ON p.stream = r.stream AND p.key = r.key ORDER BY r.n`,
  [refs.map((r) => r.stream), refs.map((r) => r.key)]);
  return rows.map(toPerson);
}
