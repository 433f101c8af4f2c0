import type { Stream } from '../../records.js';
import { attemptOutcome } from '../history-rules.js';
import type { ClaimRequest, Claimed, Delivery, DeliveryFilter, Enqueue, ListedDelivery, Settlement } from '../port.js';
import { REPLICA_TTL_MS, TAKEOVER_GRACE_MS, deliveryId } from '../tables.js';
import type { Db } from './db.js';
import { enqueue } from './enqueue.js';
import { KEEP_ATTEMPTS } from './history.js';
import { groupBy } from '../group-by.js';
import { markWaiting } from '../listed-waiting.js';
import { partOf } from '../log-parts.js';
import { byLogOrder, type OwedRow } from '../log-rows.js';

/**
 * The delivery log on PostgreSQL (docs/store.md, "The delivery log"): a webhook's records are kept
 * once each in `outbox_log`, with the connectors that take them, instead of a delivery row per
 * connector and a record row. Each connector reads the log through a cursor per part, like a created
 * range (ranges.ts): a batch of a part is leased in the cursor's row, settling it moves the cursor,
 * and a record that fails, or whose order key has a delivery row queued, becomes a row like any
 * other. A key always falls in the same part and a part has one batch in flight per connector, so
 * the records of a key go out in log order; batches of different parts go out side by side.
 *
 * The log's order must be its commit order, or a cursor could pass a record committed late under a
 * lower number: an append takes the row lock of `outbox_log_head` before it numbers its records and
 * holds it until it commits, so appends (of every replica) commit one after another.
 */

/** A record to append, as the append statements read it (JSON, one object per record). */
export interface LogRecord {
  n: number;
  part: number;
  record_id: string;
  stream: string;
  order_key: string;
  connectors: readonly string[];
  body: string;
}

export function logRecords(records: readonly Enqueue[], first = 0): LogRecord[] {
  return records.filter((r) => r.connectors.length > 0).map((r, i) => ({
    n: first + i, part: partOf(r.orderKey), record_id: r.id, stream: r.stream, order_key: r.orderKey, connectors: r.connectors, body: r.json,
  }));
}

/** The cursors the records need, as two columns (connector, part); each made once (ON CONFLICT DO NOTHING). */
export function cursorsOf(records: readonly LogRecord[]): [string[], number[]] {
  const seen = new Set<string>();
  const connectors: string[] = [];
  const parts: number[] = [];
  for (const r of records) {
    for (const connector of r.connectors) {
      const key = `${connector}\u0000${r.part}`;
      if (seen.has(key)) continue;
      seen.add(key);
      connectors.push(connector);
      parts.push(r.part);
    }
  }
  return [connectors, parts];
}

/**
 * The parts of a statement that appends `wanted` (n, part, record_id, stream, order_key, connectors,
 * body) to the log at `$enqueuedAt`, and makes the cursors `$connectors`/`$parts`: the lock first
 * (the numbers are taken after it, in `n` order), then the records, then the cursors.
 */
export const APPEND = (enqueuedAt: string, connectors: string, parts: string) => `
  head AS (
    UPDATE outbox_log_head SET appends = appends + 1 WHERE id = 0 AND EXISTS (SELECT 1 FROM wanted) RETURNING appends
  ), logged AS (
    INSERT INTO outbox_log (part, seq, record_id, stream, order_key, connectors, body, enqueued_at)
    SELECT w.part, nextval('outbox_delivery_seq_seq'), w.record_id, w.stream, w.order_key, w.connectors, w.body, ${enqueuedAt}
    FROM wanted w CROSS JOIN head ORDER BY w.n RETURNING 1
  ), cursors AS (
    INSERT INTO outbox_log_cursor (connector, part) SELECT c.connector, c.part FROM unnest(${connectors}::text[], ${parts}::int[]) AS c(connector, part)
    WHERE EXISTS (SELECT 1 FROM logged) ON CONFLICT DO NOTHING
  )`;

const WANTED = `wanted AS (SELECT * FROM json_to_recordset($1::json)
  AS w(n int, part int, record_id text, stream text, order_key text, connectors text[], body text))`;

/** Appends records to the log (an event reprocessed on purpose); returns how many deliveries they owe. */
export async function append(db: Db, records: readonly Enqueue[], now: number): Promise<number> {
  const rows = logRecords(records);
  if (rows.length === 0) return 0;
  await db.query(`WITH ${WANTED}, ${APPEND('$2::bigint', '$3', '$4')} SELECT count(*) FROM logged`, [JSON.stringify(rows), now, ...cursorsOf(rows)]);
  db.tell('outbox');
  return rows.reduce((n, r) => n + r.connectors.length, 0);
}

interface EntryRow {
  part: number;
  seq: number;
  record_id: string;
  stream: Stream;
  order_key: string;
  body: string;
  enqueued_at: number;
  mine: boolean;
  queued: boolean;
}

/** Up to `limit` records of the connector's due parts (those with no batch in flight), each part's batch leased under a fence of its own. */
export async function claimLog(db: Db, owner: string, request: ClaimRequest, limit: number): Promise<Claimed[]> {
  if (limit <= 0) return [];
  const { connector, now } = request;
  const { rows: due } = await db.query<{ part: number; after: number }>(`SELECT c.part, c.after FROM outbox_log_cursor c
    WHERE c.connector = $1 AND (c.lease_until IS NULL OR c.lease_until <= $2::bigint - ${TAKEOVER_GRACE_MS})
      AND EXISTS (SELECT 1 FROM outbox_log l WHERE l.part = c.part AND l.seq > c.after)
    ORDER BY c.part FOR UPDATE SKIP LOCKED`, [connector, now]);
  if (due.length === 0) return [];
  // Each due part its share of the batch: the parts hold disjoint keys, so their order does not matter.
  const share = Math.ceil(limit / due.length);
  // With each record whether its key has a delivery row queued (a record of it that failed, or one
  // queued before the log): such a record waits behind it as a row. Each status from its partial index.
  const { rows: entries } = await db.query<EntryRow>(`SELECT l.part, l.seq, l.record_id, l.stream, l.order_key, l.body, l.enqueued_at, l.mine,
      l.mine AND (EXISTS (SELECT 1 FROM outbox_delivery d WHERE d.connector = $3 AND d.order_key = l.order_key AND d.status IN ('pending', 'dead'))
        OR EXISTS (SELECT 1 FROM outbox_delivery d WHERE d.connector = $3 AND d.order_key = l.order_key AND d.status = 'blocked')) AS queued
    FROM unnest($1::int[], $2::bigint[]) AS c(part, after)
    CROSS JOIN LATERAL (SELECT *, $3 = ANY(l.connectors) AS mine FROM outbox_log l WHERE l.part = c.part AND l.seq > c.after ORDER BY l.seq LIMIT $4) l`,
  [due.map((d) => d.part), due.map((d) => d.after), connector, share]);
  const byPart = groupBy(entries, (e) => e.part);
  // A part's batch ends before a key it has already (the connector gets one record of a key at a
  // time), and the batches end at `limit` records; parts not reached are left as they are.
  const batches: { part: number; to: number; items: EntryRow[] }[] = [];
  let room = limit;
  for (const { part } of due) {
    const list = byPart.get(part);
    if (!list || room === 0) continue;
    const keys = new Set<string>();
    const items: EntryRow[] = [];
    let to = list[0]!.seq;
    for (const entry of list.sort((a, b) => a.seq - b.seq)) {
      if (entry.mine && (keys.has(entry.order_key) || items.length === room)) break;
      to = entry.seq;
      if (!entry.mine) continue;
      keys.add(entry.order_key);
      items.push(entry);
    }
    room -= items.length;
    batches.push({ part, to, items });
  }
  const waiting = batches.flatMap((b) => b.items.filter((i) => i.queued));
  if (waiting.length > 0) {
    await asRows(db, connector, waiting);
    for (const batch of batches) batch.items = batch.items.filter((i) => !i.queued);
  }
  const until = now + request.leaseMs;
  const { rows: fences } = await db.query<{ part: number; fence: number }>(`UPDATE outbox_log_cursor c SET
      after = CASE WHEN p.leased THEN c.after ELSE p.upto END, claimed_to = CASE WHEN p.leased THEN p.upto END,
      lease_owner = CASE WHEN p.leased THEN $2 END, lease_until = CASE WHEN p.leased THEN $3::bigint END, fence = c.fence + 1
    FROM unnest($4::int[], $5::bigint[], $6::bool[]) AS p(part, upto, leased) WHERE c.connector = $1 AND c.part = p.part RETURNING c.part, c.fence`,
  [connector, owner, until, batches.map((b) => b.part), batches.map((b) => b.to), batches.map((b) => b.items.length > 0)]);
  const fenceOf = new Map(fences.map((f) => [f.part, f.fence]));
  const out: Claimed[] = [];
  for (const batch of batches) {
    for (const entry of batch.items) {
      out.push({
        delivery: {
          id: deliveryId(connector, entry.record_id), connector, recordId: entry.record_id, stream: entry.stream, orderKey: entry.order_key,
          seq: entry.seq, status: 'active', enqueuedAt: entry.enqueued_at, runAt: entry.enqueued_at, attempts: 1, fence: fenceOf.get(batch.part)!,
          leaseUntil: until, leaseOwner: owner, log: { part: batch.part, seq: entry.seq },
        },
        json: entry.body,
      });
    }
  }
  return out.sort((a, b) => a.delivery.seq - b.delivery.seq);
}

/** Log records of one connector made delivery rows, each enqueued when it was appended. */
async function asRows(db: Db, connector: string, entries: readonly Pick<EntryRow, 'record_id' | 'stream' | 'order_key' | 'body' | 'enqueued_at'>[]): Promise<void> {
  for (const [at, group] of groupBy(entries, (e) => e.enqueued_at)) {
    await enqueue(db, group.map((e) => ({ id: e.record_id, stream: e.stream, orderKey: e.order_key, json: e.body, connectors: [connector] })), at);
  }
}

/**
 * The outcome of claimed batches of the log, each only while its lease still holds: the cursor moves
 * past the batch, each outcome is kept as an attempt, and a record that failed becomes a delivery row
 * (pending for its next try, or dead), the head of its key. Resolves with the ids settled.
 */
export async function settleLog(db: Db, owner: string, settlements: readonly Settlement[]): Promise<string[]> {
  const settled: string[] = [];
  for (const [connector, batch] of groupBy(settlements, (s) => s.connector)) settled.push(...await settleConnector(db, owner, connector, batch));
  return settled;
}

/** The settlements of one connector's batches (settleLog). */
async function settleConnector(db: Db, owner: string, connector: string, settlements: readonly Settlement[]): Promise<string[]> {
  const parts = [...new Map(settlements.map((s) => [s.log!.part, s.fence])).entries()];
  const { rows: moved } = await db.query<{ part: number }>(`WITH moved AS (
      UPDATE outbox_log_cursor c SET after = c.claimed_to, claimed_to = NULL, lease_owner = NULL, lease_until = NULL
      FROM unnest($2::int[], $3::bigint[]) AS p(part, fence)
      WHERE c.connector = $1 AND c.part = p.part AND c.fence = p.fence AND c.lease_owner = $4 AND c.claimed_to IS NOT NULL
      RETURNING c.part
    ), settled AS (
      SELECT s.record_id, $1::text AS connector, l.enqueued_at, s.at, s.outcome, s.http_status, s.duration_ms, s.error
      FROM unnest($5::int[], $6::bigint[], $7::text[], $8::bigint[], $9::text[], $10::int[], $11::int[], $12::text[])
        AS s(part, seq, record_id, at, outcome, http_status, duration_ms, error)
      JOIN outbox_log l ON l.part = s.part AND l.seq = s.seq
      WHERE s.part IN (SELECT part FROM moved)
    )${KEEP_ATTEMPTS('$4')}
    SELECT part FROM moved`, [
    connector, parts.map(([part]) => part), parts.map(([, fence]) => fence), owner,
    settlements.map((s) => s.log!.part), settlements.map((s) => s.log!.seq), settlements.map((s) => s.id.slice(connector.length + 1)),
    settlements.map((s) => s.at), settlements.map((s) => attemptOutcome(s.status)), settlements.map((s) => s.httpStatus ?? null),
    settlements.map((s) => s.durationMs ?? null), settlements.map((s) => (s.status === 'done' ? null : s.lastError)),
  ]);
  const held = new Set(moved.map((m) => m.part));
  const mine = settlements.filter((s) => held.has(s.log!.part));
  const failed = mine.filter((s): s is Extract<Settlement, { runAt: number }> => s.status !== 'done');
  if (failed.length > 0) {
    const { rows: entries } = await db.query<EntryRow>(`SELECT l.* FROM unnest($1::int[], $2::bigint[]) AS f(part, seq) JOIN outbox_log l ON l.part = f.part AND l.seq = f.seq`,
      [failed.map((s) => s.log!.part), failed.map((s) => s.log!.seq)]);
    await asRows(db, connector, entries);
    // The key's head now (a row queued meanwhile keeps it: the failed record waits behind it).
    await db.query(`UPDATE outbox_delivery d SET status = s.status, run_at = s.run_at, attempts = s.attempts, last_error = s.last_error, last_attempt_at = s.at
      FROM unnest($1::text[], $2::text[], $3::bigint[], $4::int[], $5::text[], $6::bigint[]) AS s(id, status, run_at, attempts, last_error, at)
      WHERE d.id = ANY($1::text[]) AND d.id = s.id AND d.status <> 'blocked'`, [
      failed.map((s) => s.id), failed.map((s) => s.status), failed.map((s) => s.runAt), failed.map((s) => s.attempts), failed.map((s) => s.lastError), failed.map((s) => s.at),
    ]);
  }
  return mine.map((s) => s.id);
}

/** Settlements of log records in a batch this replica holds under their fence, given their place in the log. */
export async function markLog(db: Db, owner: string, settlements: readonly Settlement[]): Promise<Settlement[]> {
  const { rows } = await db.query<{ id: string; part: number; seq: number }>(`SELECT s.id, l.part, l.seq
    FROM unnest($1::text[], $2::text[], $3::bigint[]) AS s(id, connector, fence)
    JOIN outbox_log_cursor c ON c.connector = s.connector AND c.fence = s.fence AND c.lease_owner = $4 AND c.claimed_to IS NOT NULL
    JOIN outbox_log l ON l.part = c.part AND l.seq > c.after AND l.seq <= c.claimed_to AND c.connector || ':' || l.record_id = s.id`,
  [settlements.map((s) => s.id), settlements.map((s) => s.connector), settlements.map((s) => s.fence), owner]);
  const places = new Map(rows.map((r) => [r.id, { part: r.part, seq: r.seq }]));
  return settlements.filter((s) => places.has(s.id)).map((s) => ({ ...s, log: places.get(s.id)! }));
}

/** A record of the log a connector still owes, with its cursor's lease. */
interface OwedLeaseRow extends OwedRow {
  claimed_to: number | null;
  lease_owner: string | null;
  lease_until: number | null;
  fence: number;
}

/**
 * The log's records each connector still owes (after its cursor), but those made rows while their
 * batch is in flight (the row stands for them). `where` filters them (`o.` columns), with `$1` the time.
 */
const OWED = (where: string) => `SELECT * FROM (
    SELECT c.connector, l.part, l.seq, l.record_id, l.stream, l.order_key, l.enqueued_at, c.claimed_to, c.lease_owner, c.lease_until, c.fence
    FROM outbox_log_cursor c JOIN outbox_log l ON l.part = c.part AND l.seq > c.after AND c.connector = ANY(l.connectors)
  ) o WHERE $1::bigint IS NOT NULL AND NOT EXISTS (SELECT 1 FROM outbox_delivery d WHERE d.id = o.connector || ':' || o.record_id) AND ${where}`;

function toDelivery(row: OwedLeaseRow, now: number): Delivery {
  const active = row.claimed_to !== null && row.seq <= row.claimed_to && row.lease_until !== null && row.lease_until > now;
  return {
    id: deliveryId(row.connector, row.record_id), connector: row.connector, recordId: row.record_id, stream: row.stream, orderKey: row.order_key,
    seq: row.seq, status: active ? 'active' : 'pending', enqueuedAt: row.enqueued_at, runAt: row.enqueued_at, attempts: active ? 1 : 0, fence: row.fence,
    log: { part: row.part, seq: row.seq },
    ...(active ? { leaseUntil: row.lease_until!, leaseOwner: row.lease_owner! } : {}),
  };
}

export async function getOwed(db: Db, id: string, now: number): Promise<Delivery | undefined> {
  const { rows } = await db.query<OwedLeaseRow>(OWED(`o.connector || ':' || o.record_id = $2`), [now, id]);
  return rows[0] && toDelivery(rows[0], now);
}

export async function listOwed(db: Db, filter: DeliveryFilter, now: number): Promise<ListedDelivery[]> {
  if (filter.state === 'dead') return [];
  const active = `o.claimed_to IS NOT NULL AND o.seq <= o.claimed_to AND o.lease_until > $1`;
  const { rows } = await db.query<OwedLeaseRow>(`${OWED(`($2::text IS NULL OR o.connector = $2) AND ${filter.state === 'active' ? active : 'true'}`)}
    ORDER BY o.seq, o.connector LIMIT $3`,
  [now, filter.connector ?? null, filter.limit === undefined ? null : Math.max(0, Math.floor(filter.limit))]);
  return rows.map((row) => toDelivery(row, now));
}

export async function lookupOwed(db: Db, ids: readonly string[], keys: readonly { connector: string; orderKey: string }[], now: number): Promise<ListedDelivery[]> {
  if (ids.length === 0 && keys.length === 0) return [];
  const { rows } = await db.query<OwedLeaseRow>(`${OWED(`(o.connector || ':' || o.record_id = ANY($2::text[])
    OR (o.connector, o.order_key) IN (SELECT * FROM unnest($3::text[], $4::text[])))`)} ORDER BY o.seq, o.connector`,
  [now, ids, keys.map((k) => k.connector), keys.map((k) => k.orderKey)]);
  return rows.map((row) => toDelivery(row, now));
}

/**
 * Merges rows and log records in enqueue order, up to `limit`, each log record waiting behind an
 * earlier delivery of its key naming it (listed-waiting.ts).
 */
export function merged(rows: readonly ListedDelivery[], owed: readonly ListedDelivery[], limit?: number): ListedDelivery[] {
  const all = [...rows, ...owed].sort(byLogOrder);
  return markWaiting(limit === undefined ? all : all.slice(0, Math.max(0, Math.floor(limit))));
}

export async function owedCounts(db: Db): Promise<Map<string, number>> {
  const { rows } = await db.query<{ connector: string; n: number }>(`SELECT o.connector, count(*)::bigint AS n FROM (${OWED('true')}) o GROUP BY o.connector`, [0]);
  return new Map(rows.map((r) => [r.connector, r.n]));
}

/** When the connector's log records are due next: at once where a part has some and no batch in flight, else when a lease runs out. */
export async function logNextRunAt(db: Db, connector: string): Promise<number | undefined> {
  const { rows } = await db.query<{ at: number | null }>(`SELECT min(GREATEST(f.enqueued_at, COALESCE(c.lease_until + ${TAKEOVER_GRACE_MS}, 0))) AS at
    FROM outbox_log_cursor c CROSS JOIN LATERAL (
      SELECT l.enqueued_at FROM outbox_log l WHERE l.part = c.part AND l.seq > c.after AND c.connector = ANY(l.connectors) ORDER BY l.seq LIMIT 1) f
    WHERE c.connector = $1`, [connector]);
  return rows[0]?.at ?? undefined;
}

/**
 * Leases of log batches past their time, or held by replicas (not `self`) that stopped, are free again; then the
 * records every connector they name has passed leave the log. A connector no longer configured keeps
 * only the records it was to take.
 */
export async function sweepLog(db: Db, now: number, self: string): Promise<number> {
  const reclaimed = await db.query(`UPDATE outbox_log_cursor SET lease_owner = NULL, lease_until = NULL, claimed_to = NULL
    WHERE lease_owner IS NOT NULL AND (lease_until <= $1::bigint - ${TAKEOVER_GRACE_MS} OR (lease_owner <> $3 AND lease_owner NOT IN (SELECT id FROM replica WHERE heartbeat_at > $2)))`,
  [now, now - REPLICA_TTL_MS, self]);
  await db.query(`DELETE FROM outbox_log l WHERE l.seq <= (SELECT max(c.after) FROM outbox_log_cursor c WHERE c.part = l.part)
    AND NOT EXISTS (SELECT 1 FROM outbox_log_cursor c WHERE c.part = l.part AND c.connector = ANY(l.connectors) AND c.after < l.seq)`);
  return reclaimed.rowCount ?? 0;
}
