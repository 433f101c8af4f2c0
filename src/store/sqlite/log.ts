import type Database from 'better-sqlite3';
import type { Stream } from '../../records.js';
import { groupBy } from '../group-by.js';
import { partOf } from '../log-parts.js';
import { byLogOrder, type OwedRow } from '../log-rows.js';
import type { ClaimRequest, Claimed, Delivery, DeliveryFilter, Enqueue, ListedDelivery, Settlement } from '../port.js';
import { deliveryId, ofDeliveryId } from '../tables.js';
import { enqueueFromLog } from './enqueue.js';
import { attemptRow, type AttemptRow } from './history.js';
import { leasesOf, type LeaseTable } from './leases.js';
import { QUEUED_KEYS } from './ranges.js';
import { sql } from './statements.js';

/**
 * The delivery log on SQLite (docs/store.md, "The delivery log"): a webhook's records kept once each
 * in `outbox_log`, read by each connector through a cursor per part (`outbox_log_cursor`), as on
 * PostgreSQL (postgres/log.ts). The lease of a part's batch in flight lives in the database thread's
 * memory like every lease here (leases.ts); the one writer thread makes the log's order its commit
 * order. A record leaves the log once every connector it names has passed it, when the last of them
 * moves its cursor.
 */
type Db = Database.Database;

/**
 * Whether the connector has a delivery row queued at all (a head, pending or dead, or one waiting
 * behind it), each from its partial index: when it has none, no record of the log waits behind one.
 */
export const ROWS_QUEUED = `SELECT 1 WHERE EXISTS (SELECT 1 FROM outbox_delivery WHERE connector = @connector AND status IN ('pending', 'active', 'dead'))
  OR EXISTS (SELECT 1 FROM outbox_delivery WHERE connector = @connector AND status = 'blocked')`;

/** The lease of a part's batch in flight: one per (connector, part). */
export const logLeaseId = (connector: string, part: number) => `log\u0000${connector}\u0000${part}`;

/** Appends records to the log at `now`; returns how many deliveries they owe. */
export function append(db: Db, records: readonly Enqueue[], now: number): number {
  const insert = sql(db, `INSERT INTO outbox_log (part, record_id, stream, order_key, connectors, body, enqueued_at) VALUES (?, ?, ?, ?, ?, ?, ?)`);
  const cursor = sql(db, 'INSERT INTO outbox_log_cursor (connector, part) VALUES (?, ?) ON CONFLICT DO NOTHING');
  let owed = 0;
  for (const record of records) {
    if (record.connectors.length === 0) continue;
    // A record must bring its text: the log has no other place to find it.
    if (typeof record.json !== 'string') throw new TypeError(`record ${record.id} has no text to enqueue`);
    const part = partOf(record.orderKey);
    insert.run(part, record.id, record.stream, record.orderKey, JSON.stringify(record.connectors), record.json, now);
    for (const connector of record.connectors) cursor.run(connector, part);
    owed += record.connectors.length;
  }
  return owed;
}

interface EntryRow {
  seq: number;
  record_id: string;
  stream: Stream;
  order_key: string;
  connectors: string;
  body: string;
  enqueued_at: number;
}

const names = (row: Pick<EntryRow, 'connectors'>) => JSON.parse(row.connectors) as string[];

/**
 * Deletes the records of a part in (`after`, `to`] that every connector they name has passed: run as
 * a cursor moves, so the log holds what is still owed and no more. A record of one connector needs
 * no look at the others' cursors.
 */
function prune(db: Db, connector: string, part: number, after: number, to: number): void {
  sql(db, PRUNE).run({ part, after, to, alone: JSON.stringify([connector]) });
}

export const PRUNE = `DELETE FROM outbox_log WHERE part = @part AND seq > @after AND seq <= @to AND (connectors = @alone OR NOT EXISTS (
    SELECT 1 FROM json_each(outbox_log.connectors) j JOIN outbox_log_cursor c ON c.connector = j.value AND c.part = outbox_log.part
    WHERE c.after < outbox_log.seq))`;

/** A part's next records after a cursor, in log order. */
export const NEXT_RECORDS = 'SELECT seq, record_id, stream, order_key, connectors, body, enqueued_at FROM outbox_log WHERE part = ? AND seq > ? ORDER BY seq LIMIT ?';

/** Moves a cursor to `to` and lets the log go of what no connector still owes. */
function advance(db: Db, connector: string, part: number, after: number, to: number): void {
  sql(db, 'UPDATE outbox_log_cursor SET after = ? WHERE connector = ? AND part = ?').run(to, connector, part);
  prune(db, connector, part, after, to);
}

/** Up to `limit` records of the connector's parts with no batch in flight, each part's batch leased under a fence of its own. */
export function claimLog(db: Db, owner: string, request: ClaimRequest, limit: number): Claimed[] {
  if (limit <= 0) return [];
  const { connector, now } = request;
  const leases = leasesOf(db);
  const free = (sql(db, 'SELECT part, after FROM outbox_log_cursor WHERE connector = ? ORDER BY part').all(connector) as { part: number; after: number }[])
    .filter((c) => !leases.held(logLeaseId(connector, c.part), now));
  if (free.length === 0) return [];
  const read = sql(db, NEXT_RECORDS);
  // Most records name one connector; their list is then this text, and needs no parsing.
  const alone = JSON.stringify([connector]);
  const rowsQueued = sql(db, ROWS_QUEUED).get({ connector }) !== undefined;
  // Each part its share of the batch: the parts hold disjoint keys, so their order does not matter.
  const share = Math.max(1, Math.ceil(limit / free.length));
  const out: Claimed[] = [];
  for (const { part, after } of free) {
    const room = limit - out.length;
    if (room <= 0) break;
    const entries = read.all(part, after, share) as EntryRow[];
    if (entries.length === 0) continue;
    // The batch ends before a second record of a key (one record of a key at a time) or at `room`.
    const keys = new Set<string>();
    const items: EntryRow[] = [];
    let to = after;
    for (const entry of entries) {
      const mine = entry.connectors === alone || names(entry).includes(connector);
      if (mine && (keys.has(entry.order_key) || items.length === room)) break;
      to = entry.seq;
      if (!mine) continue;
      keys.add(entry.order_key);
      items.push(entry);
    }
    // A key with a delivery row queued (a record of it that failed, or one queued before the log) waits behind it as a row.
    const queued = items.length === 0 || !rowsQueued ? new Set<string>()
      : new Set((sql(db, QUEUED_KEYS).all({ connector, keys: JSON.stringify(items.map((i) => i.order_key)) }) as { order_key: string }[]).map((r) => r.order_key));
    for (const item of items) if (queued.has(item.order_key)) asRow(db, connector, part, item);
    const batch = items.filter((i) => !queued.has(i.order_key));
    if (batch.length === 0) {
      advance(db, connector, part, after, to);
      continue;
    }
    // What the batch covers stays with its lease, in memory: a claim writes nothing.
    const enqueuedAt = new Map(batch.map((e) => [e.seq, e.enqueued_at]));
    const lease = leases.take(logLeaseId(connector, part), owner, now + request.leaseMs, { batch: { to, count: entries.length, enqueuedAt } });
    for (const entry of batch) {
      out.push({
        delivery: {
          id: deliveryId(connector, entry.record_id), connector, recordId: entry.record_id, stream: entry.stream, orderKey: entry.order_key,
          seq: entry.seq, status: 'active', enqueuedAt: entry.enqueued_at, runAt: entry.enqueued_at, attempts: 1, fence: lease.fence,
          leaseUntil: lease.until, leaseOwner: owner, log: { part, seq: entry.seq },
        },
        json: entry.body,
      });
    }
  }
  // The parts' shares in log order: a batch goes out in the order its records came.
  return out.sort((a, b) => a.delivery.seq - b.delivery.seq);
}

/** A log record of one connector made a delivery row, enqueued when it was appended. */
function asRow(db: Db, connector: string, part: number, entry: Pick<EntryRow, 'seq' | 'record_id' | 'stream' | 'order_key' | 'body' | 'enqueued_at'>): void {
  const record = { id: entry.record_id, stream: entry.stream, orderKey: entry.order_key, json: entry.body };
  enqueueFromLog(db, connector, record, { part, seq: entry.seq }, entry.enqueued_at);
}

/**
 * The outcome of claimed batches of the log, each only while its lease still holds: the cursor moves
 * past the batch, each outcome is an attempt of its record (added to `attempts` for the caller to
 * write), and a record that failed becomes a delivery row (pending for its next try, or dead), the
 * head of its key. Returns the ids settled.
 */
export function settleLog(db: Db, owner: string, settlements: readonly Settlement[], attempts: AttemptRow[]): string[] {
  const leases = leasesOf(db);
  const groups = groupBy(settlements, (s) => logLeaseId(s.connector, s.log!.part));
  const read = sql(db, 'SELECT seq, record_id, stream, order_key, connectors, body, enqueued_at FROM outbox_log WHERE seq = ?');
  const settled: string[] = [];
  for (const [id, group] of groups) {
    const { connector, fence, log } = group[0]!;
    const lease = leases.end(id, fence, owner);
    if (!lease?.batch) continue;
    const after = sql(db, 'SELECT after FROM outbox_log_cursor WHERE connector = ? AND part = ?').pluck().get(connector, log!.part) as number | undefined;
    if (after === undefined) continue;
    const enqueuedAt = lease.batch.enqueuedAt!;
    for (const s of group) {
      const at = enqueuedAt.get(s.log!.seq);
      if (at === undefined) continue;
      attempts.push(attemptRow(s, s.id.slice(connector.length + 1), at));
      settled.push(s.id);
      if (s.status === 'done') continue;
      const entry = read.get(s.log!.seq) as EntryRow | undefined;
      if (entry) asRow(db, connector, log!.part, entry);
      // The key's head now (a row queued meanwhile keeps it: the failed record waits behind it).
      sql(db, `UPDATE outbox_delivery SET status = ?, run_at = ?, attempts = ?, last_error = ?, last_attempt_at = ? WHERE id = ? AND status <> 'blocked'`)
        .run(s.status, s.runAt, s.attempts, s.lastError, s.at, s.id);
    }
    advance(db, connector, log!.part, after, lease.batch.to as number);
  }
  return settled;
}

/** Settlements that name no place but are of log records this replica holds (made by hand, not by the worker). */
export function markLog(db: Db, owner: string, settlements: readonly Settlement[], now: number): Settlement[] {
  const leases = leasesOf(db);
  const out: Settlement[] = [];
  const find = sql(db, `SELECT l.part, l.seq FROM outbox_log_cursor c JOIN outbox_log l ON l.part = c.part AND l.seq > c.after
    WHERE c.connector = ? AND ? || ':' || l.record_id = ?`);
  for (const s of settlements) {
    for (const { part, seq } of find.all(s.connector, s.connector, s.id) as { part: number; seq: number }[]) {
      const lease = leases.holding(logLeaseId(s.connector, part), now);
      if (lease?.batch && lease.fence === s.fence && lease.owner === owner && seq <= (lease.batch.to as number)) out.push({ ...s, log: { part, seq } });
    }
  }
  return out;
}

/**
 * The log's records each connector still owes (after its cursor), but those made rows while their
 * batch is in flight (the row stands for them), filtered by `where` (`o.` columns).
 */
const OWED = (where: string) => `SELECT * FROM (
    SELECT c.connector, l.part, l.seq, l.record_id, l.stream, l.order_key, l.enqueued_at
    FROM outbox_log_cursor c JOIN outbox_log l ON l.part = c.part AND l.seq > c.after
    WHERE EXISTS (SELECT 1 FROM json_each(l.connectors) j WHERE j.value = c.connector)
  ) o WHERE NOT EXISTS (SELECT 1 FROM outbox_delivery d WHERE d.id = o.connector || ':' || o.record_id) AND ${where}`;

function toDelivery(leases: LeaseTable, row: OwedRow, now: number): Delivery {
  const lease = leases.holding(logLeaseId(row.connector, row.part), now);
  const active = lease?.batch !== undefined && row.seq <= (lease.batch.to as number);
  return {
    id: deliveryId(row.connector, row.record_id), connector: row.connector, recordId: row.record_id, stream: row.stream, orderKey: row.order_key,
    seq: row.seq, status: active ? 'active' : 'pending', enqueuedAt: row.enqueued_at, runAt: row.enqueued_at, attempts: active ? 1 : 0,
    fence: lease?.fence ?? 0, log: { part: row.part, seq: row.seq },
    ...(active ? { leaseUntil: lease.until, leaseOwner: lease.owner } : {}),
  };
}

/** A record one connector owes, by its id: through the index of record ids, in whichever part it is. */
export const OWED_OF_ID = OWED('o.connector = @connector AND o.record_id = @recordId');

function owedOfId(db: Db, id: string): OwedRow | undefined {
  const named = ofDeliveryId(id);
  return named && (sql(db, OWED_OF_ID).get(named) as OwedRow | undefined);
}

export function getOwed(db: Db, id: string, now: number): Delivery | undefined {
  const row = owedOfId(db, id);
  return row && toDelivery(leasesOf(db), row, now);
}

/** A part's records one connector owes, in log order, the first `limit` (-1: all), or those up to `to`. */
export const OWED_OF_PART = `${OWED('o.connector = @connector AND o.part = @part AND o.seq <= @to')} ORDER BY o.seq LIMIT @limit`;

/**
 * The log's part of a list: read per cursor, each part's first records in log order, so that a
 * list of a few reads a few records of each part and not every record owed (a long outage's).
 * Those in flight are the records of the batches leased now (leases.ts), read from their ranges.
 */
export function listOwed(db: Db, filter: DeliveryFilter, now: number): ListedDelivery[] {
  if (filter.state === 'dead') return [];
  const limit = filter.limit === undefined ? -1 : Math.max(0, Math.floor(filter.limit));
  const leases = leasesOf(db);
  const read = sql(db, OWED_OF_PART);
  const rows: OwedRow[] = [];
  const cursors = sql(db, 'SELECT connector, part FROM outbox_log_cursor').all() as { connector: string; part: number }[];
  for (const { connector, part } of cursors) {
    if (filter.connector !== undefined && connector !== filter.connector) continue;
    let to = Number.MAX_SAFE_INTEGER;
    if (filter.state === 'active') {
      const lease = leases.holding(logLeaseId(connector, part), now);
      if (lease?.batch === undefined) continue;
      to = lease.batch.to as number;
    }
    rows.push(...read.all({ connector, part, to, limit }) as OwedRow[]);
  }
  rows.sort(byLogOrder);
  return (limit === -1 ? rows : rows.slice(0, limit)).map((row) => toDelivery(leases, row, now));
}

/** A key's records one connector owes, through the index of order keys; they are all in the key's part (log-parts.ts). */
export const OWED_OF_KEY = `${OWED('o.connector = @connector AND o.part = @part AND o.order_key = @key')} ORDER BY o.seq`;

/** Records owed by delivery id (through the index of record ids) or by key (through the index of order keys). */
export function lookupOwed(db: Db, ids: readonly string[], keys: readonly { connector: string; orderKey: string }[], now: number): ListedDelivery[] {
  const rows = new Map<string, OwedRow>();
  for (const id of ids) {
    const row = owedOfId(db, id);
    if (row) rows.set(deliveryId(row.connector, row.record_id), row);
  }
  const byKey = sql(db, OWED_OF_KEY);
  for (const { connector, orderKey } of keys) {
    for (const row of byKey.all({ connector, part: partOf(orderKey), key: orderKey }) as OwedRow[]) rows.set(deliveryId(row.connector, row.record_id), row);
  }
  const leases = leasesOf(db);
  return [...rows.values()]
    .sort(byLogOrder)
    .map((row) => toDelivery(leases, row, now));
}

/**
 * The records after each cursor of one part that name its connector, from the part's index alone: a
 * count must not read every record's text, since /metrics asks for it at every scrape and the log
 * may hold a long outage's records. A list names the connector when it holds its JSON string: lists
 * are written by JSON.stringify, which writes a name as json_quote does (connector names hold no
 * control characters: letters, digits, "_", "." and "-").
 */
export const OWED_COUNTS = `SELECT c.connector, count(*) AS n FROM outbox_log_cursor c
  JOIN outbox_log l ON l.part = c.part AND l.seq > c.after
  WHERE c.part = ? AND instr(l.connectors, json_quote(c.connector)) > 0 GROUP BY c.connector`;

/** The delivery rows that stand for log records of one part still after their connector's cursor (OWED's NOT EXISTS). */
export const MADE_ROWS = `SELECT c.connector, count(*) AS n FROM outbox_log_cursor c
  JOIN outbox_delivery d ON d.connector = c.connector AND d.log_part = c.part AND d.log_seq > c.after
  WHERE c.part = ? AND d.log_seq IS NOT NULL GROUP BY c.connector`;

/**
 * What `OWED` gives in one part of the log, counted per connector. The store counts each part in a
 * call of its own (sqlite/port-methods.ts): a webhook's commit then waits behind one part's count,
 * not behind a long outage's whole log.
 */
export function owedCounts(db: Db, part: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const row of sql(db, OWED_COUNTS).all(part) as { connector: string; n: number }[]) out.set(row.connector, row.n);
  for (const row of sql(db, MADE_ROWS).all(part) as { connector: string; n: number }[]) {
    const n = (out.get(row.connector) ?? 0) - row.n;
    if (n > 0) out.set(row.connector, n);
    else out.delete(row.connector);
  }
  return out;
}

/** When the connector's log records are due next: at once where a part has some and no batch in flight, else when its lease runs out. */
export function logNextRunAt(db: Db, connector: string, now: number): number | undefined {
  const leases = leasesOf(db);
  const first = sql(db, `SELECT l.enqueued_at FROM outbox_log l WHERE l.part = ? AND l.seq > ?
    AND EXISTS (SELECT 1 FROM json_each(l.connectors) j WHERE j.value = ?) ORDER BY l.seq LIMIT 1`).pluck();
  let at: number | undefined;
  for (const { part, after } of sql(db, 'SELECT part, after FROM outbox_log_cursor WHERE connector = ?').all(connector) as { part: number; after: number }[]) {
    const enqueuedAt = first.get(part, after, connector) as number | undefined;
    if (enqueuedAt === undefined) continue;
    const due = Math.max(enqueuedAt, leases.holding(logLeaseId(connector, part), now)?.until ?? 0);
    at = at === undefined ? due : Math.min(at, due);
  }
  return at;
}
