import type Database from 'better-sqlite3';
import type { Enqueue, InboxEntry, QuarantineEntry } from '../port.js';
import { jsonForms, likeContains } from '../history-rules.js';
import { toEntry, type InboxRow } from '../inbox-rows.js';
import { append } from './log.js';
import { sql } from './statements.js';

/** The inbox and quarantine on SQLite (the port's InboxStore; each function runs inside a transaction). */
type Db = Database.Database;

interface QuarantineRow {
  id: string;
  event: string;
  reason: 'stale' | 'future';
  signed_at: number;
  received_at: string;
  body: string;
}

function insertEvent(db: Db, entry: InboxEntry): boolean {
  const inserted = sql(
    db,
    `INSERT INTO inbox (id, event, received_at, received_at_ms, body, record_ids, reprocessed)
     VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
  ).run(entry.id, entry.event, entry.receivedAt, entry.receivedAtMs, entry.body, JSON.stringify(entry.recordIds), entry.reprocessed);
  return inserted.changes > 0;
}

export function accept(db: Db, entry: InboxEntry, records: readonly Enqueue[]): 'stored' | 'duplicate' {
  if (!insertEvent(db, entry)) return 'duplicate';
  sql(db, 'DELETE FROM quarantine WHERE id = ?').run(entry.id);
  append(db, records, entry.receivedAtMs);
  return 'stored';
}

export function getEvent(db: Db, id: string): InboxEntry | undefined {
  const row = sql(db, 'SELECT * FROM inbox WHERE id = ?').get(id) as InboxRow | undefined;
  return row && toEntry(row);
}

export function reprocess(db: Db, id: string, expected: number, recordIds: string[], records: readonly Enqueue[], now: number): boolean {
  const updated = sql(db, 'UPDATE inbox SET reprocessed = ?, record_ids = ? WHERE id = ? AND reprocessed = ?')
    .run(expected + 1, JSON.stringify(recordIds), id, expected);
  if (updated.changes === 0) return false;
  append(db, records, now);
  return true;
}

export function quarantine(db: Db, entry: QuarantineEntry): boolean {
  const inserted = sql(
    db,
    `INSERT INTO quarantine (id, event, reason, signed_at, received_at, body)
     SELECT ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM inbox WHERE id = ?) ON CONFLICT (id) DO NOTHING`,
  ).run(entry.id, entry.event, entry.reason, entry.timestamp, entry.receivedAt, entry.body, entry.id);
  return inserted.changes > 0;
}

export function quarantined(db: Db): QuarantineEntry[] {
  const rows = sql(db, 'SELECT * FROM quarantine ORDER BY received_at, id').all() as QuarantineRow[];
  return rows.map((row) => ({ id: row.id, event: row.event, reason: row.reason, timestamp: row.signed_at, receivedAt: row.received_at, body: row.body }));
}

export function release(db: Db, id: string, entry: InboxEntry, records: readonly Enqueue[]): 'released' | 'duplicate' | 'missing' {
  if (sql(db, 'DELETE FROM quarantine WHERE id = ?').run(id).changes === 0) return 'missing';
  return accept(db, entry, records) === 'stored' ? 'released' : 'duplicate';
}

/** The oldest events before a time, at most a number of them, found by `inbox_received`. */
export const PRUNE_EVENTS = 'DELETE FROM inbox WHERE rowid IN (SELECT rowid FROM inbox WHERE received_at_ms < ? ORDER BY received_at_ms LIMIT ?)';

export function prune(db: Db, beforeMs: number, limit: number): number {
  return sql(db, PRUNE_EVENTS).run(beforeMs, limit).changes;
}

/** Where a search of the inbox goes on: below this event in the order of `inbox_received`, newest first. */
export interface SearchCursor {
  at: number;
  rowid: number;
}

/** The last of the next `skip + 1` events below a cursor, newest first: where a window of them ends. */
export const WINDOW_END = `SELECT received_at_ms AS at, rowid FROM inbox WHERE (received_at_ms, rowid) < (@at, @rowid)
  ORDER BY received_at_ms DESC, rowid DESC LIMIT 1 OFFSET @skip`;

/** The events of a window whose body holds one of the patterns; LIKE ignores the case of ASCII letters, jsonForms gives the others' cases. */
export const WINDOW_MATCHES = `SELECT * FROM inbox WHERE (received_at_ms, rowid) < (@at, @rowid) AND (received_at_ms, rowid) >= (@endAt, @endRowid)
  AND EXISTS (SELECT 1 FROM json_each(@patterns) p WHERE inbox.body LIKE p.value ESCAPE '\\')
  ORDER BY received_at_ms DESC, rowid DESC LIMIT @limit`;

const NEWEST: SearchCursor = { at: Number.MAX_SAFE_INTEGER, rowid: Number.MAX_SAFE_INTEGER };
const OLDEST: SearchCursor = { at: Number.MIN_SAFE_INTEGER, rowid: Number.MIN_SAFE_INTEGER };

/**
 * One window of a search of the inbox: of the next `rows` events below `before` (from the newest),
 * those whose body contains one of `texts`, at most `limit`, and where the next window starts
 * (none after the oldest). A search reads every event it does not find enough in (the inbox keeps
 * days of them), so the store reads it a window per call: the calls of webhooks run between them.
 */
export function searchWindow(db: Db, texts: readonly string[], limit: number, before: SearchCursor | undefined, rows: number): { entries: InboxEntry[]; next?: SearchCursor } {
  const patterns = texts.filter((t) => t !== '').flatMap(jsonForms).map(likeContains);
  if (patterns.length === 0 || limit <= 0) return { entries: [] };
  const from = before ?? NEWEST;
  const end = sql(db, WINDOW_END).get({ ...from, skip: Math.max(1, Math.floor(rows)) - 1 }) as SearchCursor | undefined;
  const found = sql(db, WINDOW_MATCHES).all({ ...from, endAt: (end ?? OLDEST).at, endRowid: (end ?? OLDEST).rowid, patterns: JSON.stringify(patterns), limit: Math.floor(limit) }) as InboxRow[];
  return { entries: found.map(toEntry), ...(end ? { next: end } : {}) };
}
