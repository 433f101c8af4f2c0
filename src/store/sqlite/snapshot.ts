import type Database from 'better-sqlite3';
import { INDEX_PAGE_ROWS, readIndexPages, type IndexPage } from '../index-pages.js';
import type { FreshRows, Key, SnapshotIndex, SnapshotRow, SnapshotStream, StagedRow, StatePatch } from '../port.js';
import { toRow, type SnapshotDbRow as Row } from '../snapshot-rows.js';
import { CHAIN_LENGTH, keyTypeOf, snapshotTable } from '../tables.js';
import { enqueue, keepCreatedTexts } from './enqueue.js';
import { followPeople } from './people-follow.js';
import { createRanges, createdPending } from './ranges.js';
import { addKeys, beginKeys, dropKeys, takeKeys } from './staged-keys.js';
import { putState } from './state.js';
import { sql } from './statements.js';
import { KEY_COLUMN, rowColumns } from './stream-tables.js';

/**
 * The poll snapshot on SQLite: a table per stream keyed by the record id (the rowid, so rows are kept
 * in key order), and two staging tables a cycle fills before anything moves: `_next`, a whole new
 * snapshot for a stream that has none (swapped in at once), and `_changes`, the rows a cycle changes.
 */
type Db = Database.Database;

/** The stream's row count, kept in `snapshot_meta` by every apply: count(*) reads the whole table. */
export function size(db: Db, stream: SnapshotStream): number {
  const row = sql(db, 'SELECT rows FROM snapshot_meta WHERE stream = ?').get(stream) as { rows: number } | undefined;
  return row?.rows ?? 0;
}

export function version(db: Db, stream: SnapshotStream): number {
  const row = sql(db, 'SELECT version FROM snapshot_meta WHERE stream = ?').get(stream) as { version: number } | undefined;
  return row?.version ?? 0;
}

/** A new version of the stream's rows, `delta` rows more (or fewer) than before; returns it. */
function bumpVersion(db: Db, stream: SnapshotStream, delta: number): number {
  return sql(db, 'INSERT INTO snapshot_meta (stream, version, rows) VALUES (?, 1, ?) ON CONFLICT (stream) DO UPDATE SET version = version + 1, rows = rows + excluded.rows RETURNING version')
    .pluck().get(stream, delta) as number;
}

/** Up to `limit` rows of the index after `after`, in key order, with the version they belong to. */
export function indexPage(db: Db, stream: SnapshotStream, after: Key | undefined, limit: number): IndexPage {
  // all(), not iterate(): no statement iterator left for the garbage collector (handles.ts).
  const rows = sql(db, `SELECT key, raw_hash FROM ${snapshotTable(stream)} WHERE key > ? ORDER BY key LIMIT ?`).raw()
    .all(after ?? KEY_FLOOR[keyTypeOf(stream)], limit) as [Key, string | null][];
  const keys = keyTypeOf(stream) === 'integer' ? Float64Array.from(rows, (row) => row[0] as number) : rows.map((row) => row[0] as string);
  let hashes = '';
  for (const row of rows) hashes += `${row[1] ?? ''}\n`;
  return { version: version(db, stream), keys, hashes };
}

/** The whole index, page by page in one go (a reader beside the daemon, which no webhook waits for). */
export function index(db: Db, stream: SnapshotStream): Promise<SnapshotIndex> {
  return readIndexPages(async (after, limit) => indexPage(db, stream, after, limit), INDEX_PAGE_ROWS);
}

export function rows(db: Db, stream: SnapshotStream, keys: readonly Key[]): SnapshotRow[] {
  const get = sql(db, `SELECT * FROM ${snapshotTable(stream)} WHERE key = ?`);
  const out: SnapshotRow[] = [];
  for (const key of keys) {
    const row = get.get(key) as Row | undefined;
    if (row) out.push(toRow(row));
  }
  return out;
}

/** The chains deleted keys left, by key text (port-snapshot.ts, `gone`). */
export function gone(db: Db, stream: SnapshotStream, keys: readonly Key[]): Map<string, string> {
  const get = sql(db, 'SELECT chain FROM snapshot_gone WHERE stream = ? AND key = ?').pluck();
  const out = new Map<string, string>();
  for (const key of keys) {
    const chain = get.get(stream, String(key)) as string | undefined;
    if (chain !== undefined) out.set(String(key), chain);
  }
  return out;
}

/**
 * Below every key of its type: a parameter compared with a TEXT column is compared as text (-Infinity
 * would be '-Inf', above some keys), and no non-empty string is below ''.
 */
export const KEY_FLOOR = { integer: -Infinity, string: '' } as const;

export function scan(db: Db, stream: SnapshotStream, after: Key | undefined, limit: number): SnapshotRow[] {
  return (sql(db, `SELECT * FROM ${snapshotTable(stream)} WHERE key > ? ORDER BY key LIMIT ?`).all(after ?? KEY_FLOOR[keyTypeOf(stream)], limit) as Row[]).map(toRow);
}

export function begin(db: Db, stream: SnapshotStream, kind: 'fresh' | 'changes'): void {
  discard(db, stream);
  sql(db, 'INSERT INTO snapshot_meta (stream, staged) VALUES (?, 0) ON CONFLICT (stream) DO UPDATE SET staged = 0').run(stream);
  const type = keyTypeOf(stream);
  if (kind === 'fresh') beginKeys(db, stream);
  db.exec(kind === 'fresh'
    ? `CREATE TABLE ${snapshotTable(stream, 'next')} (${rowColumns(type)})`
    : `CREATE TABLE ${snapshotTable(stream, 'changes')} (key ${KEY_COLUMN[type]} PRIMARY KEY, chain TEXT NOT NULL, body TEXT, raw_hash TEXT, change_id TEXT, change_json TEXT)`);
}

export function discard(db: Db, stream: SnapshotStream): void {
  dropKeys(db, stream);
  db.exec(`DROP TABLE IF EXISTS ${snapshotTable(stream, 'next')}; DROP TABLE IF EXISTS ${snapshotTable(stream, 'changes')}`);
}

export function stageFresh(db: Db, stream: SnapshotStream, fresh: FreshRows): void {
  // The bytes go in as they came from the list worker: a BLOB read as TEXT is not converted again.
  const insert = sql(db, `INSERT INTO ${snapshotTable(stream, 'next')} (key, chain, body, raw_hash) VALUES (?, ?, CAST(? AS TEXT), ?)`);
  const bytes = Buffer.from(fresh.bytes.buffer, fresh.bytes.byteOffset, fresh.bytes.byteLength);
  let start = 0;
  fresh.keys.forEach((key, i) => {
    const end = fresh.ends[i]!;
    insert.run(key, bytes.toString('latin1', start, start + CHAIN_LENGTH), bytes.subarray(start + CHAIN_LENGTH, end), fresh.hashes[i]);
    start = end;
  });
  sql(db, 'UPDATE snapshot_meta SET staged = staged + ? WHERE stream = ?').run(fresh.keys.length, stream);
  addKeys(db, stream, fresh.keys);
}

export function stageChanges(db: Db, stream: SnapshotStream, staged: readonly StagedRow[]): void {
  const insert = sql(db, `INSERT INTO ${snapshotTable(stream, 'changes')} (key, chain, body, raw_hash, change_id, change_json) VALUES (?, ?, ?, ?, ?, ?)`);
  for (const row of staged) insert.run(row.key, row.chain, row.body, row.rawHash, row.change?.id ?? null, row.change?.json ?? null);
}

export function applyFresh(db: Db, stream: SnapshotStream, state: StatePatch, created: { detectedAt: string; connectors: readonly string[]; now: number } | undefined): void {
  if (size(db, stream) > 0) throw new Error(`a fresh ${stream} snapshot cannot replace one that holds rows`);
  const next = snapshotTable(stream, 'next');
  // Counted as staged: count(*) would read the whole new table, holding every other call meanwhile.
  const { n } = sql(db, 'SELECT staged AS n FROM snapshot_meta WHERE stream = ?').get(stream) as { n: number };
  db.exec(`DROP TABLE ${snapshotTable(stream)}; ALTER TABLE ${next} RENAME TO ${snapshotTable(stream)}`);
  const keys = takeKeys(db, stream, n);
  if (created) createRanges(db, stream, n, keys, created.detectedAt, created.connectors, created.now);
  bumpVersion(db, stream, n);
  putState(db, state);
}

export function applyChanges(db: Db, stream: SnapshotStream, limit: number, connectors: readonly string[], state: StatePatch, now: number): { applied: number; done: boolean } {
  if (createdPending(db, stream) > 0) throw new Error(`the created changes of ${stream} must all have rows of their own before its snapshot changes`);
  const changes = snapshotTable(stream, 'changes');
  const staged = sql(db, `SELECT * FROM ${changes} ORDER BY key LIMIT ?`).all(limit) as (Row & { body: string | null; change_id: string | null; change_json: string | null })[];
  const table = snapshotTable(stream);
  const put = sql(db, `INSERT INTO ${table} (key, chain, body, raw_hash) VALUES (?, ?, ?, ?)
    ON CONFLICT (key) DO UPDATE SET chain = excluded.chain, body = excluded.body, raw_hash = excluded.raw_hash`);
  const del = sql(db, `DELETE FROM ${table} WHERE key = ?`);
  const leave = sql(db, 'INSERT INTO snapshot_gone (stream, key, chain) VALUES (?, ?, ?) ON CONFLICT (stream, key) DO UPDATE SET chain = excluded.chain');
  const exists = sql(db, `SELECT 1 FROM ${table} WHERE key = ?`).pluck();
  let delta = 0;
  for (const row of staged) {
    keepCreatedTexts(db, stream, row.key);
    if (row.body === null) {
      delta -= del.run(row.key).changes;
      // The deletion's chain stays with the key, for a later re-creation to start from.
      if (row.chain !== '') leave.run(stream, String(row.key), row.chain);
    } else {
      if (exists.get(row.key) === undefined) delta += 1;
      put.run(row.key, row.chain, row.body, row.raw_hash);
    }
    if (row.change_id !== null && row.change_json !== null) {
      enqueue(db, [{ id: row.change_id, stream, orderKey: `${stream}:${row.key}`, json: row.change_json, connectors }], now);
    }
  }
  if (staged.length > 0) sql(db, `DELETE FROM ${changes} WHERE key <= ?`).run(staged.at(-1)!.key);
  followPeople(db, stream, bumpVersion(db, stream, delta), staged.map((row) => row.key));
  const done = sql(db, `SELECT 1 FROM ${changes} LIMIT 1`).get() === undefined;
  if (done) putState(db, state);
  return { applied: staged.length, done };
}
