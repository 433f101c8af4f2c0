import type { Enqueue, InboxEntry, QuarantineEntry } from '../port.js';
import type { Db } from './db.js';
import { enqueue } from './enqueue.js';

/** The inbox and quarantine on PostgreSQL (the port's InboxStore); `accepts` serves a whole batch. */
interface InboxRow {
  id: string;
  event: string;
  received_at: string;
  received_at_ms: number;
  body: string;
  record_ids: string;
  reprocessed: number;
}

export interface Accept {
  entry: InboxEntry;
  records: readonly Enqueue[];
}

/**
 * Stores a batch of events in the transaction it is given: the first of each id is stored (unless
 * stored before), with its records; the others are duplicates.
 */
export async function accepts(db: Db, batch: readonly Accept[]): Promise<('stored' | 'duplicate')[]> {
  const entries = batch.map((a) => a.entry);
  // Bodies as one JSON text (JSON.stringify, native), not text arrays the client escapes element by element.
  const json = JSON.stringify(entries.map((e) => ({
    id: e.id, event: e.event, received_at: e.receivedAt, received_at_ms: e.receivedAtMs, body: e.body, record_ids: JSON.stringify(e.recordIds), reprocessed: e.reprocessed,
  })));
  const { rows } = await db.query<{ id: string }>(`INSERT INTO inbox (id, event, received_at, received_at_ms, body, record_ids, reprocessed)
    SELECT id, event, received_at, received_at_ms, body, record_ids, reprocessed
    FROM json_to_recordset($1::json) AS t(id text, event text, received_at text, received_at_ms bigint, body text, record_ids text, reprocessed int)
    ON CONFLICT (id) DO NOTHING RETURNING id`, [json]);
  const fresh = new Set(rows.map((r) => r.id));
  const answers = batch.map((a) => {
    if (!fresh.has(a.entry.id)) return 'duplicate' as const;
    fresh.delete(a.entry.id); // a second delivery of the same event in this batch is a duplicate of the first
    return 'stored' as const;
  });
  const stored = batch.filter((_, i) => answers[i] === 'stored');
  if (stored.length > 0) {
    await db.query('DELETE FROM quarantine WHERE id = ANY($1::text[])', [stored.map((a) => a.entry.id)]);
    await enqueue(db, stored.flatMap((a) => a.records), Math.max(...stored.map((a) => a.entry.receivedAtMs)));
  }
  return answers;
}

export async function getEvent(db: Db, id: string): Promise<InboxEntry | undefined> {
  const { rows } = await db.query<InboxRow>('SELECT * FROM inbox WHERE id = $1', [id]);
  const row = rows[0];
  return row && {
    id: row.id, event: row.event, receivedAt: row.received_at, receivedAtMs: row.received_at_ms,
    body: row.body, recordIds: JSON.parse(row.record_ids) as string[], reprocessed: row.reprocessed,
  };
}

export async function reprocess(db: Db, id: string, expected: number, recordIds: string[], records: readonly Enqueue[], now: number): Promise<boolean> {
  const updated = await db.query('UPDATE inbox SET reprocessed = $1, record_ids = $2 WHERE id = $3 AND reprocessed = $4', [expected + 1, JSON.stringify(recordIds), id, expected]);
  if (updated.rowCount === 0) return false;
  await enqueue(db, records, now);
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

export async function prune(db: Db, beforeMs: number): Promise<number> {
  return (await db.query('DELETE FROM inbox WHERE received_at_ms < $1', [beforeMs])).rowCount ?? 0;
}
