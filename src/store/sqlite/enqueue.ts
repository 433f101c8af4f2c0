import type Database from 'better-sqlite3';
import type { Enqueue, Key, SnapshotStream } from '../port.js';
import { deliveryId, snapshotTable } from '../tables.js';
import { sql } from './statements.js';

/** Putting deliveries and their records into the SQLite outbox (outbox.ts says how they are laid out). */
type Db = Database.Database;

/**
 * Inserts one delivery: pending when no other delivery heads its key, else blocked behind it. `body`
 * is the record's text; null when it lives in `outbox_record` (a created change of a snapshot row).
 * Returns false when the delivery exists already (queued, dead or done).
 */
function insertDelivery(
  db: Db, connector: string, record: { id: string; stream: string; orderKey: string }, body: string | null, now: number,
  log: { part: number; seq: number } | null = null,
): boolean {
  const id = deliveryId(connector, record.id);
  const values = [id, connector, record.id, record.stream, record.orderKey, now, now, body, log?.part ?? null, log?.seq ?? null];
  // Any conflict (the id, or a head of the key) inserts nothing; then it waits, unless the id exists.
  const head = sql(db, `INSERT INTO outbox_delivery (id, connector, record_id, stream, order_key, status, enqueued_at, run_at, body, log_part, log_seq)
    VALUES (?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`).run(...values);
  if (head.changes > 0) return true;
  const waiting = sql(db, `INSERT INTO outbox_delivery (id, connector, record_id, stream, order_key, status, enqueued_at, run_at, body, log_part, log_seq)
    VALUES (?, ?, ?, ?, ?, 'blocked', ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`).run(...values);
  return waiting.changes > 0;
}

/** Adds `count` deliveries to a created change kept in `outbox_record`, storing it first if it is not stored. */
function addRecord(db: Db, id: string, count: number, lazy: { stream: SnapshotStream; key: Key; chain: string; detectedAt: string }): void {
  sql(db, `INSERT INTO outbox_record (id, body, pending, snapshot_stream, snapshot_key, snapshot_chain, detected_at) VALUES (?, NULL, ?, ?, ?, ?, ?)
    ON CONFLICT (id) DO UPDATE SET pending = pending + excluded.pending`)
    .run(id, count, lazy.stream, lazy.key, lazy.chain, lazy.detectedAt);
}

/**
 * Enqueues records for their connectors, each delivery with the record's text; ids already queued
 * are skipped. Returns deliveries added.
 */
export function enqueue(db: Db, records: readonly Enqueue[], now: number): number {
  let added = 0;
  for (const record of records) {
    // A delivery without text is one whose record lives in outbox_record: a record must bring its own.
    if (typeof record.json !== 'string') throw new TypeError(`record ${record.id} has no text to enqueue`);
    for (const connector of record.connectors) if (insertDelivery(db, connector, record, record.json, now)) added += 1;
  }
  return added;
}

/**
 * Makes a record of the delivery log a delivery row of one connector, enqueued when the record was
 * appended, with its place in the log (`log_part`, `log_seq`): until the connector's cursor passes
 * it, the row stands for it there (log.ts).
 */
export function enqueueFromLog(
  db: Db, connector: string, record: { id: string; stream: string; orderKey: string; json: string }, log: { part: number; seq: number }, enqueuedAt: number,
): void {
  insertDelivery(db, connector, record, record.json, enqueuedAt, log);
}

/**
 * Enqueues a created change whose text is its snapshot row (what a created range owes, made a row).
 * Returns deliveries added.
 */
export function enqueueLazy(db: Db, stream: SnapshotStream, key: Key, chain: string, detectedAt: string, connectors: readonly string[], now: number): number {
  const id = `${stream}:${key}:${chain}`;
  const record = { id, stream, orderKey: `${stream}:${key}` };
  let count = 0;
  for (const connector of connectors) if (insertDelivery(db, connector, record, null, now)) count += 1;
  if (count > 0) addRecord(db, id, count, { stream, key, chain, detectedAt });
  return count;
}

/**
 * Before snapshot rows change, the created changes still made from them get their text of their own
 * (a record is what was detected, whatever the snapshot holds later).
 */
export function keepCreatedTexts(db: Db, stream: SnapshotStream, key: Key): void {
  sql(db, `UPDATE outbox_record SET record_text = (SELECT body FROM ${snapshotTable(stream)} s WHERE s.key = outbox_record.snapshot_key AND s.chain = outbox_record.snapshot_chain)
    WHERE snapshot_stream = ? AND snapshot_key = ? AND body IS NULL AND record_text IS NULL`).run(stream, key);
}
