import type { Enqueue, Key, SnapshotStream } from '../port.js';
import { deliveryId, snapshotTable } from '../tables.js';
import type { Db } from './db.js';
import { keySql, sharedKey } from './stream-tables.js';

/**
 * Putting deliveries and their records into the PostgreSQL outbox, set-wise (outbox.ts says how they
 * are laid out).
 */
export interface NewDelivery {
  id: string;
  connector: string;
  recordId: string;
  stream: string;
  orderKey: string;
}

/**
 * A delivery is a head (`pending`) only where its key has neither a head nor one waiting: one left
 * waiting with no head (outbox.ts, promoteOrphans) still goes first.
 */
const INSERT_DELIVERIES = (status: 'pending' | 'blocked', conflict: string) => `
  INSERT INTO outbox_delivery (id, connector, record_id, stream, order_key, status, enqueued_at, run_at)
  SELECT id, connector, record_id, stream, order_key, '${status}', $6, $6
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS t(id, connector, record_id, stream, order_key, n)
  ${status === 'pending' ? `WHERE NOT EXISTS (SELECT 1 FROM outbox_delivery b WHERE b.connector = t.connector AND b.order_key = t.order_key AND b.status = 'blocked')` : ''}
  ORDER BY n ${conflict} RETURNING id, record_id`;

/**
 * Inserts deliveries in the given order: heads of their keys as pending, the others blocked behind;
 * ids that exist already are skipped. Returns, per record id, how many were added.
 */
export async function insertDeliveries(db: Db, deliveries: readonly NewDelivery[], now: number): Promise<Map<string, number>> {
  const added = new Map<string, number>();
  if (deliveries.length === 0) return added;
  const columns = (list: readonly NewDelivery[]) => [list.map((d) => d.id), list.map((d) => d.connector), list.map((d) => d.recordId), list.map((d) => d.stream), list.map((d) => d.orderKey), now];
  const heads = await db.query<{ id: string; record_id: string }>(INSERT_DELIVERIES('pending', 'ON CONFLICT DO NOTHING'), columns(deliveries));
  const inserted = new Set(heads.rows.map((r) => r.id));
  const rest = deliveries.filter((d) => !inserted.has(d.id));
  const waiting = rest.length === 0 ? [] : (await db.query<{ id: string; record_id: string }>(INSERT_DELIVERIES('blocked', 'ON CONFLICT (id) DO NOTHING'), columns(rest))).rows;
  for (const row of [...heads.rows, ...waiting]) added.set(row.record_id, (added.get(row.record_id) ?? 0) + 1);
  if (added.size > 0) {
    db.tell('outbox');
    db.grew(heads.rows.length + waiting.length);
  }
  return added;
}

export async function enqueue(db: Db, records: readonly Enqueue[], now: number): Promise<number> {
  const deliveries = records.flatMap((r) => r.connectors.map((connector) => ({ id: deliveryId(connector, r.id), connector, recordId: r.id, stream: r.stream, orderKey: r.orderKey })));
  const added = await insertDeliveries(db, deliveries, now);
  const seen = new Set<string>();
  const stored = records.filter((r) => added.has(r.id) && !seen.has(r.id) && seen.add(r.id));
  if (stored.length > 0) {
    // The records' texts as one JSON text: see inbox.ts.
    await db.query(`INSERT INTO outbox_record (id, body, pending)
      SELECT id, body, pending FROM json_to_recordset($1::json) AS t(id text, body text, pending int)
      ON CONFLICT (id) DO UPDATE SET pending = outbox_record.pending + excluded.pending`,
    [JSON.stringify(stored.map((r) => ({ id: r.id, body: r.json, pending: added.get(r.id)! })))]);
  }
  let total = 0;
  for (const n of added.values()) total += n;
  return total;
}

/**
 * Enqueues the created changes of snapshot rows, their text read from the row (what a created range
 * owes, made rows). The key goes into the column of its type (stream-tables.ts). Returns the ids of
 * the records that got a delivery.
 */
export async function enqueueLazy(
  db: Db, stream: SnapshotStream, rows: readonly { key: Key; chain: string }[], detectedAt: string, connectors: readonly string[], now: number,
): Promise<ReadonlySet<string>> {
  const records = rows.map(({ key, chain }) => ({ id: `${stream}:${key}:${chain}`, key, chain }));
  const deliveries = records.flatMap((r) => connectors.map((connector) => ({ id: deliveryId(connector, r.id), connector, recordId: r.id, stream, orderKey: `${stream}:${r.key}` })));
  const added = await insertDeliveries(db, deliveries, now);
  const stored = records.filter((r) => added.has(r.id));
  if (stored.length === 0) return new Set();
  await db.query(`INSERT INTO outbox_record (id, pending, snapshot_stream, ${sharedKey(stream, 'snapshot_key')}, snapshot_chain, detected_at)
    SELECT id, pending, $4, key, chain, $5 FROM unnest($1::text[], $2::int[], $3::${keySql(stream)}[], $6::text[]) AS t(id, pending, key, chain)
    ON CONFLICT (id) DO UPDATE SET pending = outbox_record.pending + excluded.pending`,
  [stored.map((r) => r.id), stored.map((r) => added.get(r.id)!), stored.map((r) => r.key), stream, detectedAt, stored.map((r) => r.chain)]);
  return new Set(stored.map((r) => r.id));
}

/** Before snapshot rows change, the created changes still made from them get their text of their own. */
export async function keepCreatedTexts(db: Db, stream: SnapshotStream, keys: readonly Key[]): Promise<void> {
  if (keys.length === 0) return;
  const key = sharedKey(stream, 'snapshot_key');
  await db.query(`UPDATE outbox_record r SET record_text = s.body FROM ${snapshotTable(stream)} s
    WHERE r.snapshot_stream = $1 AND r.${key} = ANY($2::${keySql(stream)}[]) AND r.body IS NULL AND r.record_text IS NULL
      AND s.key = r.${key} AND s.chain = r.snapshot_chain`, [stream, keys]);
}
