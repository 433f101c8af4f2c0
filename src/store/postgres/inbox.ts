import type { Enqueue, InboxEntry, QuarantineEntry } from '../port.js';
import { toEntry, type InboxRow } from '../inbox-rows.js';
import type { Db } from './db.js';
import { jsonForms, likeContains } from '../history-rules.js';
import { APPEND, append, cursorsOf, logRecords, type LogRecord } from './log.js';

/** The inbox and quarantine on PostgreSQL (the port's InboxStore); `accepts` serves a whole batch. */
export interface Accept {
  entry: InboxEntry;
  records: readonly Enqueue[];
}

/**
 * Stores a batch of events, each with its records, in ONE statement (so one round trip and, outside a
 * transaction, one commit): the first of each id is stored unless stored before, with its records
 * appended to the delivery log (log.ts); the others are duplicates. Its parts, in the order their
 * results feed each other: the inbox rows, the quarantine copies of the stored ones gone, and the
 * stored events' records in the log. Whether any record was appended comes back with each stored id,
 * for the notice to the other replicas.
 */
const ACCEPT = `
  WITH events AS (
    SELECT * FROM json_to_recordset($1::json)
      AS t(id text, event text, received_at text, received_at_ms bigint, body text, record_ids text, reprocessed int)
  ), stored AS (
    INSERT INTO inbox (id, event, received_at, received_at_ms, body, record_ids, reprocessed)
    SELECT id, event, received_at, received_at_ms, body, record_ids, reprocessed FROM events
    ON CONFLICT (id) DO NOTHING RETURNING id
  ), unheld AS (
    DELETE FROM quarantine WHERE id IN (SELECT id FROM stored)
  ), wanted AS (
    SELECT w.* FROM json_to_recordset($2::json)
      AS w(n int, event_id text, part int, record_id text, stream text, order_key text, connectors text[], body text)
    WHERE w.event_id IN (SELECT id FROM stored)
  ), ${APPEND('$3::bigint', '$4', '$5')}
  SELECT id, EXISTS (SELECT 1 FROM logged) AS due FROM stored`;

export async function accepts(db: Db, batch: readonly Accept[]): Promise<('stored' | 'duplicate')[]> {
  // Bodies as JSON texts (JSON.stringify, native), not text arrays the client escapes element by element.
  const events: object[] = [];
  const records: (LogRecord & { event_id: string })[] = [];
  const firsts = new Set<string>();
  for (const { entry, records: own } of batch) {
    // A second delivery of an event in the batch is a duplicate of the first: only the first brings records.
    if (firsts.has(entry.id)) continue;
    firsts.add(entry.id);
    events.push({
      id: entry.id, event: entry.event, received_at: entry.receivedAt, received_at_ms: entry.receivedAtMs,
      body: entry.body, record_ids: JSON.stringify(entry.recordIds), reprocessed: entry.reprocessed,
    });
    for (const record of logRecords(own, records.length)) records.push({ ...record, event_id: entry.id });
  }
  const now = Math.max(...batch.map((a) => a.entry.receivedAtMs));
  const { rows } = await db.query<{ id: string; due: boolean }>(ACCEPT, [JSON.stringify(events), JSON.stringify(records), now, ...cursorsOf(records)]);
  if (rows.some((r) => r.due)) db.tell('outbox');
  const fresh = new Set(rows.map((r) => r.id));
  return batch.map((a) => {
    if (!fresh.has(a.entry.id)) return 'duplicate' as const;
    fresh.delete(a.entry.id); // a second delivery of the same event in this batch is a duplicate of the first
    return 'stored' as const;
  });
}

export async function getEvent(db: Db, id: string): Promise<InboxEntry | undefined> {
  const { rows } = await db.query<InboxRow>('SELECT * FROM inbox WHERE id = $1', [id]);
  return rows[0] && toEntry(rows[0]);
}

export async function reprocess(db: Db, id: string, expected: number, recordIds: string[], records: readonly Enqueue[], now: number): Promise<boolean> {
  const updated = await db.query('UPDATE inbox SET reprocessed = $1, record_ids = $2 WHERE id = $3 AND reprocessed = $4', [expected + 1, JSON.stringify(recordIds), id, expected]);
  if (updated.rowCount === 0) return false;
  await append(db, records, now);
  return true;
}

export async function quarantine(db: Db, entry: QuarantineEntry): Promise<boolean> {
  const inserted = await db.query(`INSERT INTO quarantine (id, event, reason, signed_at, received_at, body)
    SELECT $1, $2, $3, $4, $5, $6 WHERE NOT EXISTS (SELECT 1 FROM inbox WHERE id = $1) ON CONFLICT (id) DO NOTHING`,
  [entry.id, entry.event, entry.reason, entry.timestamp, entry.receivedAt, entry.body]);
  return (inserted.rowCount ?? 0) > 0;
}

export async function quarantined(db: Db): Promise<QuarantineEntry[]> {
  const { rows } = await db.query<{ id: string; event: string; reason: 'stale' | 'future'; signed_at: number; received_at: string; body: string }>(
    'SELECT * FROM quarantine ORDER BY received_at, id');
  return rows.map((row) => ({ id: row.id, event: row.event, reason: row.reason, timestamp: row.signed_at, receivedAt: row.received_at, body: row.body }));
}

export async function release(db: Db, id: string, entry: InboxEntry, records: readonly Enqueue[]): Promise<'released' | 'duplicate' | 'missing'> {
  const removed = await db.query('DELETE FROM quarantine WHERE id = $1', [id]);
  if (removed.rowCount === 0) return 'missing';
  const [answer] = await accepts(db, [{ entry, records }]);
  return answer === 'stored' ? 'released' : 'duplicate';
}

export async function prune(db: Db, beforeMs: number, limit: number): Promise<number> {
  const removed = await db.query('DELETE FROM inbox WHERE id IN (SELECT id FROM inbox WHERE received_at_ms < $1 ORDER BY received_at_ms LIMIT $2)', [beforeMs, limit]);
  return removed.rowCount ?? 0;
}

/** A scan of the inbox (it keeps a few days of events), bounded by `limit` matches; ILIKE ignores the case of ASCII letters (under the C locale), jsonForms gives the others' cases. */
export async function search(db: Db, texts: readonly string[], limit: number): Promise<InboxEntry[]> {
  const patterns = texts.filter((t) => t !== '').flatMap(jsonForms).map(likeContains);
  if (patterns.length === 0) return [];
  const { rows } = await db.query<InboxRow>('SELECT * FROM inbox WHERE body ILIKE ANY($1::text[]) ORDER BY received_at_ms DESC LIMIT $2',
    [patterns, Math.max(0, Math.floor(limit))]);
  return rows.map(toEntry);
}
