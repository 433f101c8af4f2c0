import type Database from 'better-sqlite3';
import type { Stream } from '../../records.js';
import type {
  ClaimRequest, Claimed, DeadChunk, Delivery, DeliveryFilter, DeliveryStatus, ListedDelivery, OutboxCounts, RetryTarget, Settlement, SnapshotStream,
} from '../port.js';
import { rowDelivery, type DeliveryRow } from '../delivery-rows.js';
import { groupBy } from '../group-by.js';
import { markWaiting } from '../listed-waiting.js';
import { REPLICA_TTL_MS, SNAPSHOT_STREAMS, snapshotTable } from '../tables.js';
import { attemptRow, recordAttempts, type AttemptRow } from './history.js';
import { leasesOf } from './leases.js';
import { claimLog, getOwed, listOwed, logNextRunAt, markLog, settleLog } from './log.js';
import { claimRange, leaseId as rangeLeaseId, rangeCounts, rangeNextRunAt, settleRange } from './ranges.js';
import { sql } from './statements.js';

/**
 * The outbox on SQLite. One row per (connector, record) in `outbox_delivery` until it is done, with
 * the record's text; a created change made from a snapshot row has none yet and is kept once in
 * `outbox_record`, with a count of its deliveries not done yet (docs/store.md). Per-key order: a
 * delivery is `pending` only as the head of its connector and order key (the unique index
 * `outbox_head` allows one pending or dead delivery per key); later ones wait `blocked` and the oldest
 * of them becomes pending when the head is done. A dead head keeps its key waiting, and nothing else.
 * Leases live in the database thread's memory (leases.ts): a delivery in flight is `pending` on disk.
 * A webhook's records are kept apart, once each in the delivery log (log.ts), and a claim takes
 * rows first, then log records, then a first cycle's ranges (ranges.ts).
 */
type Db = Database.Database;

/** A delivery row's columns but its record's text (which `deliveries list` never needs). */
export const DELIVERY_COLUMNS = ['seq', 'id', 'connector', 'record_id', 'stream', 'order_key', 'status', 'enqueued_at', 'run_at', 'attempts', 'last_error', 'last_attempt_at', 'lease_owner', 'lease_until', 'fence'] as const;
const COLUMNS = DELIVERY_COLUMNS.join(', ');
const D_COLUMNS = DELIVERY_COLUMNS.map((c) => `d.${c}`).join(', ');

/** A due delivery, with its record's text when the delivery holds it. */
interface ClaimRow {
  seq: number;
  id: string;
  record_id: string;
  stream: Stream;
  order_key: string;
  enqueued_at: number;
  run_at: number;
  attempts: number;
  last_error: string | null;
  last_attempt_at: number | null;
  body: string | null;
}

/** A record kept in `outbox_record`: a created change and the text it has now. */
interface RecordRow {
  body: string | null;
  snapshot_stream: SnapshotStream | null;
  snapshot_key: number | null;
  snapshot_chain: string | null;
  detected_at: string | null;
  text: string | null;
}

/** A created change's own text, or its snapshot row's while the row is still the one it was made from. */
const LAZY_TEXT = `CASE WHEN r.body IS NULL THEN coalesce(r.record_text, CASE r.snapshot_stream ${SNAPSHOT_STREAMS.map(
  (s) => `WHEN '${s}' THEN (SELECT body FROM ${snapshotTable(s)} s WHERE s.key = r.snapshot_key AND s.chain = r.snapshot_chain)`,
).join(' ')} END) END`;

/**
 * Due heads of a connector in claim order (those in flight are at the front), a page after the
 * (run_at, seq) given: read from the index alone, so skipping the deliveries in flight (up to
 * `concurrency` batches of them) reads none of their rows.
 */
export const DUE = `SELECT d.seq, d.run_at FROM outbox_delivery d INDEXED BY outbox_ready
  WHERE d.connector = ? AND d.status = 'pending' AND d.run_at <= ? AND (d.run_at, d.seq) > (?, ?) ORDER BY d.run_at, d.seq LIMIT ?`;

/** A due delivery's row, read once it is to be claimed. */
const DUE_ROW = `SELECT d.seq, d.id, d.record_id, d.stream, d.order_key, d.enqueued_at, d.run_at, d.attempts, d.last_error, d.last_attempt_at, d.body
  FROM outbox_delivery d WHERE d.seq = ?`;

const RECORD = `SELECT r.body, r.snapshot_stream, r.snapshot_key, r.snapshot_chain, r.detected_at, ${LAZY_TEXT} AS text FROM outbox_record r WHERE r.id = ?`;

function claimedOf(db: Db, row: ClaimRow, connector: string, owner: string, lease: { fence: number; until: number }): Claimed {
  const delivery: Delivery = {
    id: row.id, connector, recordId: row.record_id, stream: row.stream, orderKey: row.order_key, seq: row.seq, status: 'active',
    enqueuedAt: row.enqueued_at, runAt: row.run_at, attempts: row.attempts + 1, fence: lease.fence, leaseUntil: lease.until, leaseOwner: owner,
    ...(row.last_error === null ? {} : { lastError: row.last_error }),
    ...(row.last_attempt_at === null ? {} : { lastAttemptAt: row.last_attempt_at }),
  };
  if (row.body !== null) return { delivery, json: row.body };
  const record = sql(db, RECORD).get(row.record_id) as RecordRow | undefined;
  if (record?.body != null) return { delivery, json: record.body };
  if (!record) return { delivery };
  const { snapshot_stream: stream, snapshot_key: key, snapshot_chain: chain, detected_at: detectedAt, text } = record;
  if (stream === null || key === null || chain === null || detectedAt === null || text === null) return { delivery };
  return { delivery, created: { stream, key, chain, detectedAt, text } };
}

/**
 * The rows of a query ordered by (run_at, seq) a page at a time, each page after the last row of the
 * one before (`query` ends with `(d.run_at, d.seq) > (?, ?) ORDER BY d.run_at, d.seq LIMIT ?`), read
 * with `all()`: a statement iterator that is left for the garbage collector can be destroyed as its
 * thread ends, outside any JavaScript context, which aborts Node.js 24 (handles.ts).
 */
function* pages<T extends { run_at: number; seq: number }>(db: Db, query: string, params: readonly unknown[], size = 64): Generator<T> {
  const page = sql(db, query);
  for (let after = [-Infinity, -Infinity]; ;) {
    const rows = page.all(...params, ...after, size) as T[];
    yield* rows;
    if (rows.length < size) return;
    const last = rows.at(-1)!;
    after = [last.run_at, last.seq];
  }
}

export function claim(db: Db, owner: string, request: ClaimRequest): Claimed[] {
  const leases = leasesOf(db);
  const out: Claimed[] = [];
  const until = request.now + request.leaseMs;
  const read = sql(db, DUE_ROW);
  for (const { seq } of pages<{ seq: number; run_at: number }>(db, DUE, [request.connector, request.now], Math.max(16, request.limit))) {
    if (leases.heldSeq(seq, request.now)) continue;
    const row = read.get(seq) as ClaimRow;
    out.push(claimedOf(db, row, request.connector, owner, leases.take(row.id, owner, until, { seq })));
    if (out.length >= request.limit) return out;
  }
  out.push(...claimLog(db, owner, request, request.limit - out.length));
  return out.length < request.limit ? [...out, ...claimRange(db, owner, request, request.limit - out.length)] : out;
}

/**
 * Each settlement that holds is kept as an attempt (history.ts), written with the outcomes in the
 * same transaction.
 */
export function settle(db: Db, owner: string, settlements: readonly Settlement[]): string[] {
  const leases = leasesOf(db);
  const settled: string[] = [];
  // A range's change whose batch's lease moved to its row (materializeCreated) settles as that row.
  const ofBatch = (s: Settlement) => s.range !== undefined && leases.lease(rangeLeaseId(s.connector, s.range.stream, s.range.part))?.fence === s.fence;
  const fromRanges = groupBy(settlements.filter(ofBatch), (s) => `${s.connector}\u0000${s.range!.stream}\u0000${s.range!.part}`);
  const done = new Map<string, Settlement>();
  const attempts: AttemptRow[] = [];
  const fromLog: Settlement[] = [];
  const unmarked: Settlement[] = [];
  for (const s of settlements) {
    if (s.log) {
      fromLog.push(s);
      continue;
    }
    if (ofBatch(s)) continue;
    if (!leases.end(s.id, s.fence, owner)) {
      if (!s.range) unmarked.push(s);
      continue;
    }
    if (s.status === 'done') {
      done.set(s.id, s);
      continue;
    }
    const row = sql(db, `UPDATE outbox_delivery SET status = ?, run_at = ?, attempts = ?, last_error = ?, last_attempt_at = ? WHERE id = ? RETURNING record_id, enqueued_at`)
      .get(s.status, s.runAt, s.attempts, s.lastError, s.at, s.id) as { record_id: string; enqueued_at: number } | undefined;
    if (row) {
      settled.push(s.id);
      attempts.push(attemptRow(s, row.record_id, row.enqueued_at));
    }
  }
  for (const batch of fromRanges.values()) settled.push(...settleRange(db, owner, batch, attempts));
  // A settlement that names no place may still be of a log record this replica holds (one made by hand).
  if (unmarked.length > 0) fromLog.push(...markLog(db, owner, unmarked, Math.max(...unmarked.map((s) => s.at))));
  if (fromLog.length > 0) settled.push(...settleLog(db, owner, fromLog, attempts));
  const finished = done.size === 0 ? [] : sql(db, `DELETE FROM outbox_delivery WHERE id IN (SELECT value FROM json_each(?))
    RETURNING id, connector, order_key, record_id, enqueued_at, body IS NULL AS shared`)
    .all(JSON.stringify([...done.keys()])) as { id: string; connector: string; order_key: string; record_id: string; enqueued_at: number; shared: 0 | 1 }[];
  for (const f of finished) attempts.push(attemptRow(done.get(f.id)!, f.record_id, f.enqueued_at));
  recordAttempts(db, owner, attempts);
  if (finished.length === 0) return settled;
  for (const f of finished) settled.push(f.id);
  promoteNext(db, finished.map((f) => ({ ...f, at: done.get(f.id)!.at })));
  // A record kept in outbox_record goes with its last delivery.
  const shared = finished.filter((f) => f.shared === 1);
  if (shared.length === 0) return settled;
  const ids = JSON.stringify(shared.map((f) => f.record_id));
  sql(db, 'UPDATE outbox_record SET pending = pending - 1 WHERE id IN (SELECT value FROM json_each(?))').run(ids);
  sql(db, 'DELETE FROM outbox_record WHERE id IN (SELECT value FROM json_each(?)) AND pending <= 0').run(ids);
  return settled;
}

/**
 * The oldest delivery waiting behind each finished head becomes the head (rarely any: most keys wait
 * for nobody), its retry window starting then (PROMOTE).
 */
function promoteNext(db: Db, finished: readonly { connector: string; order_key: string; at: number }[]): void {
  if (sql(db, `SELECT 1 FROM outbox_delivery WHERE status = 'blocked' LIMIT 1`).get() === undefined) return;
  const next = sql(db, `SELECT seq FROM outbox_delivery WHERE connector = ? AND order_key = ? AND status = 'blocked' ORDER BY seq LIMIT 1`);
  const promote = sql(db, PROMOTE);
  for (const f of finished) {
    const row = next.get(f.connector, f.order_key) as { seq: number } | undefined;
    if (row) promote.run({ seq: row.seq, at: f.at });
  }
}

/**
 * A waiting delivery made its key's head: its retry window (`enqueued_at`) starts when it may first
 * be tried, not when it was enqueued. One that waited behind a dead head for longer than
 * delivery.maxAgeHours would otherwise be dead after its first failed attempt.
 */
export const PROMOTE = `UPDATE outbox_delivery SET status = 'pending', enqueued_at = MAX(enqueued_at, @at) WHERE seq = @seq`;

export function retry(db: Db, target: RetryTarget, now: number): string[] {
  const one = sql(db, `UPDATE outbox_delivery SET status = 'pending', attempts = 0, enqueued_at = ?, run_at = ? WHERE id = ? AND status IN ('dead', 'pending') RETURNING id, seq`);
  const rows: { id: string; seq: number }[] = [];
  for (const id of 'id' in target ? [target.id] : target.ids) {
    if (leasesOf(db).held(id, now)) continue; // in flight: its outcome decides
    const row = one.get(now, now, id) as { id: string; seq: number } | undefined;
    if (row) rows.push(row);
  }
  return rows.sort((a, b) => a.seq - b.seq).map((r) => r.id);
}

/** Of one connector, by `outbox_dead` in enqueue order; of all, by the rows' sequence, reading each row once over all chunks. */
export const DEAD_CHUNK = (connector: boolean) => `UPDATE outbox_delivery SET status = 'pending', attempts = 0, enqueued_at = @now, run_at = @now
  WHERE seq IN (SELECT seq FROM outbox_delivery WHERE status = 'dead' ${connector ? 'AND connector = @connector ' : ''}AND seq > @after ORDER BY seq LIMIT @limit)
  RETURNING id, seq`;

export function retryDead(db: Db, chunk: DeadChunk, now: number): { ids: string[]; last: number | undefined } {
  const { connector, after, limit } = chunk;
  const rows = (sql(db, DEAD_CHUNK(connector !== undefined)).all({ now, after, limit, ...(connector === undefined ? {} : { connector }) }) as { id: string; seq: number }[])
    .sort((a, b) => a.seq - b.seq);
  return { ids: rows.map((r) => r.id), last: rows.at(-1)?.seq };
}

/** A chunk of the dead, as DEAD_CHUNK finds them to retry: of a connector through `outbox_dead`, of all by the sequence. */
export const LIST_DEAD = (connector: boolean) => `SELECT ${COLUMNS} FROM outbox_delivery
  WHERE status = 'dead' ${connector ? 'AND connector = @connector ' : ''}AND seq > @after ORDER BY seq LIMIT @limit`;

export function listDead(db: Db, chunk: DeadChunk): ListedDelivery[] {
  const { connector, after, limit } = chunk;
  const rows = sql(db, LIST_DEAD(connector !== undefined)).all({ after, limit, ...(connector === undefined ? {} : { connector }) }) as DeliveryRow[];
  return rows.map((row) => rowDelivery(row));
}

export function getDelivery(db: Db, id: string, now: number): Delivery | undefined {
  const row = sql(db, `SELECT ${COLUMNS} FROM outbox_delivery WHERE id = ?`).get(id) as DeliveryRow | undefined;
  return row ? leasesOf(db).overlay(rowDelivery(row), now) : getOwed(db, id, now);
}

const STATES: Record<NonNullable<DeliveryFilter['state']>, string> = {
  pending: `status IN ('pending', 'blocked')`,
  active: `status = 'pending'`,
  dead: `status = 'dead'`,
};

export function list(db: Db, filter: DeliveryFilter = {}, now: number): ListedDelivery[] {
  const leases = leasesOf(db);
  const where = [filter.state ? STATES[filter.state] : '1 = 1'];
  const params: unknown[] = [];
  if (filter.connector !== undefined) {
    where.push('connector = ?');
    params.push(filter.connector);
  }
  // In flight is known in memory only (leases.ts): the rows leased now, not the first pending rows,
  // of which some may not be, or the limit would cut the list short.
  if (filter.state === 'active') {
    where.push('seq IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(leases.heldSeqs(now)));
  }
  const limit = filter.limit === undefined ? '' : ` LIMIT ${Math.max(0, Math.floor(filter.limit))}`;
  const rows = sql(db, `SELECT ${D_COLUMNS}, (SELECT h.id FROM outbox_delivery h WHERE d.status = 'blocked' AND h.connector = d.connector
      AND h.order_key = d.order_key AND h.status IN ('pending', 'active', 'dead')) AS waiting_for
    FROM outbox_delivery d WHERE ${where.join(' AND ')} ORDER BY seq${limit}`).all(...params) as (DeliveryRow & { waiting_for: string | null })[];
  const listed = rows.map((row) => {
    const delivery = leases.overlay(rowDelivery(row), now);
    // Waiting behind another is pending to whoever reads the list; what it waits for says why.
    if (delivery.status !== 'blocked') return delivery;
    return { ...delivery, status: 'pending' as const, ...(row.waiting_for === null ? {} : { waitingFor: row.waiting_for }) };
  });
  const own = filter.state === 'active' ? listed.filter((d) => d.status === 'active') : listed;
  return mergeListed(own, listOwed(db, filter, now), filter.limit);
}

/**
 * Rows and log records together in enqueue order, up to `limit`, each log record waiting behind an
 * earlier delivery of its key naming it (listed-waiting.ts). By enqueue time first: the log
 * numbers its records apart from the rows (log.ts), so only within each are the numbers an order.
 */
export function mergeListed(rows: readonly ListedDelivery[], owed: readonly ListedDelivery[], limit?: number): ListedDelivery[] {
  if (owed.length === 0) return [...rows];
  const all = [...rows, ...owed].sort((a, b) => a.enqueuedAt - b.enqueuedAt || a.seq - b.seq || (a.connector < b.connector ? -1 : a.connector > b.connector ? 1 : 0));
  return markWaiting(limit === undefined ? all : all.slice(0, Math.max(0, Math.floor(limit))));
}

/**
 * Deliveries per connector and stored status (pending, blocked or dead: a lease is not stored), each
 * counted from its partial index. Read on every scrape of /metrics and in the console, on the
 * thread webhooks wait for: a count from the rows would read every queued record's text.
 */
export const COUNTS = ['pending', 'blocked', 'dead']
  .map((status) => `SELECT connector, '${status}' AS status, count(*) AS n FROM outbox_delivery WHERE status = '${status}' GROUP BY connector`)
  .join(' UNION ALL ');

/** The counts of the delivery rows, by status, and of the first cycle's ranges: all but the log's. */
export function rowCounts(db: Db): Map<string, OutboxCounts> {
  const out = new Map<string, OutboxCounts>([...rangeCounts(db)].map(([connector, n]) => [connector, { depth: n, dead: 0 }]));
  const rows = sql(db, COUNTS).all() as { connector: string; status: DeliveryStatus; n: number }[];
  for (const { connector, status, n } of rows) {
    const c = out.get(connector) ?? { depth: 0, dead: 0 };
    if (status === 'dead') c.dead += n;
    else c.depth += n;
    out.set(connector, c);
  }
  return out;
}

/** The earliest run time of the connector's pending deliveries not in flight (those in flight are at the front). */
export function nextRunAt(db: Db, connector: string, now: number): number | undefined {
  const leases = leasesOf(db);
  // DUE with no bound on the run time: pending deliveries due later count too.
  const others = Math.min(rangeNextRunAt(db, connector, now) ?? Infinity, logNextRunAt(db, connector, now) ?? Infinity);
  for (const row of pages<{ seq: number; run_at: number }>(db, DUE, [connector, Infinity])) {
    if (!leases.heldSeq(row.seq, now)) return Math.min(row.run_at, others);
  }
  return others === Infinity ? undefined : others;
}

export function sweep(db: Db, now: number, self: string): { reclaimed: number } {
  // A lease ends at its time, or with its replica: one whose heartbeat stopped no longer delivers.
  // Never this one's by its heartbeat: it is running, and a heartbeat it could not write (a full
  // disk) must not hand its batches in flight to its own next claims, to be delivered again.
  const live = new Set((sql(db, 'SELECT id FROM replica WHERE heartbeat_at > ?').all(now - REPLICA_TTL_MS) as { id: string }[]).map((r) => r.id));
  live.add(self);
  return { reclaimed: leasesOf(db).reclaim(now, (owner) => live.has(owner)) };
}
