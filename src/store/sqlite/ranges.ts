import type Database from 'better-sqlite3';
import { compareKeys } from '../../streams/index.js';
import type { ClaimRequest, Claimed, CreatedRange, Key, Settlement, SnapshotStream } from '../port.js';
import { holdsRange } from '../range-hold.js';
import { rangeParts } from '../range-parts.js';
import { deliveryId, keyTypeOf, snapshotTable } from '../tables.js';
import { enqueueLazy } from './enqueue.js';
import { attemptRow, type AttemptRow } from './history.js';
import { leasesOf } from './leases.js';
import { KEY_FLOOR } from './snapshot.js';
import { sql } from './statements.js';

/**
 * Created ranges on SQLite (the port's CreatedRange): what a fresh snapshot owes a connector, a row
 * per connector, stream and part (range-parts.ts), delivered from the snapshot's rows a batch at a
 * time. The row's cursor
 * (`after`) moves past a batch once its outcome is known; a change of the batch that is not done, or
 * whose key has another delivery queued, becomes a delivery row of its own first, so it keeps its
 * order behind that one and its own retries. A first cycle of 300,000 records thus costs a row write
 * per batch, not three per record.
 */
type Db = Database.Database;

interface RangeRow {
  connector: string;
  stream: SnapshotStream;
  part: number;
  detected_at: string;
  after: Key | null;
  upto: Key;
  remaining: number;
  enqueued_at: number;
  run_at: number;
  attempts: number;
  last_error: string | null;
}

/** The lease of a range's batch in flight: one per (connector, stream, part). */
export const leaseId = (connector: string, stream: SnapshotStream, part: number) => `range\u0000${connector}\u0000${stream}\u0000${part}`;

/**
 * The ranges of each connector over the whole (just swapped in) snapshot of `stream`, of `n` rows:
 * in parts when its `keys` are known (staged-keys.ts), else one.
 */
export function createRanges(db: Db, stream: SnapshotStream, n: number, keys: readonly Key[] | undefined, detectedAt: string, connectors: readonly string[], now: number): void {
  const { upto } = sql(db, `SELECT max(key) AS upto FROM ${snapshotTable(stream)}`).get() as { upto: Key | null };
  if (n === 0 || upto === null) return;
  const parts = keys ? rangeParts(keys) : [];
  const bounds = parts.length > 1 ? parts : [{ upto, count: n }];
  const insert = sql(db, `INSERT INTO outbox_range (connector, stream, part, detected_at, after, upto, remaining, enqueued_at, run_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  for (const connector of connectors) {
    bounds.forEach((p, part) => insert.run(connector, stream, part, detectedAt, 'after' in p ? p.after : null, p.upto, p.count, now, now));
  }
}

/** The bodies come as their UTF-8 bytes: making JS strings of them cost three times the read. */
function rowsAfter(db: Db, range: RangeRow, limit: number): { key: Key; chain: string; body: Uint8Array }[] {
  return sql(db, `SELECT key, chain, CAST(body AS BLOB) AS body FROM ${snapshotTable(range.stream)} WHERE key > ? AND key <= ? ORDER BY key LIMIT ?`)
    .all(range.after ?? KEY_FLOOR[keyTypeOf(range.stream)], range.upto, limit) as { key: Key; chain: string; body: Uint8Array }[];
}

/** Moves the cursor past the claimed batch; a range with nothing left goes. */
function advance(db: Db, range: RangeRow, to: Key, count: number): void {
  const remaining = Math.max(0, range.remaining - count);
  if (remaining === 0 || compareKeys(to, range.upto) >= 0) {
    drop(db, range);
    return;
  }
  sql(db, 'UPDATE outbox_range SET after = ?, remaining = ?, attempts = 0, last_error = NULL WHERE connector = ? AND stream = ? AND part = ?')
    .run(to, remaining, range.connector, range.stream, range.part);
}

function drop(db: Db, range: RangeRow): void {
  sql(db, 'DELETE FROM outbox_range WHERE connector = ? AND stream = ? AND part = ?').run(range.connector, range.stream, range.part);
}

/**
 * Which of a batch's order keys (`@keys`, a JSON array) have a delivery of `@connector` queued. Heads
 * and those waiting behind them are asked for apart, each from its partial index: with no status the
 * query could use neither and would read the whole table, for every batch of a first cycle.
 */
export const QUEUED_KEYS = `
  SELECT order_key FROM outbox_delivery WHERE connector = @connector AND order_key IN (SELECT value FROM json_each(@keys)) AND status IN ('pending', 'active', 'dead')
  UNION ALL SELECT order_key FROM outbox_delivery WHERE connector = @connector AND order_key IN (SELECT value FROM json_each(@keys)) AND status = 'blocked'`;

/** Up to `limit` created changes of a due range of the connector, leased to `owner` under one fence. */
export function claimRange(db: Db, owner: string, request: ClaimRequest, limit: number): Claimed[] {
  const leases = leasesOf(db);
  const due = sql(db, 'SELECT * FROM outbox_range WHERE connector = ? AND run_at <= ? ORDER BY run_at, stream, part').all(request.connector, request.now) as RangeRow[];
  for (const range of due) {
    const id = leaseId(range.connector, range.stream, range.part);
    if (leases.held(id, request.now)) continue;
    const rows = rowsAfter(db, range, limit);
    if (rows.length === 0) {
      drop(db, range);
      continue;
    }
    // A key with a delivery queued already (from before the snapshot was fresh) waits behind it as a row.
    const queued = new Set((sql(db, QUEUED_KEYS)
      .all({ connector: range.connector, keys: JSON.stringify(rows.map((r) => `${range.stream}:${r.key}`)) }) as { order_key: string }[]).map((r) => r.order_key));
    for (const row of rows) {
      if (queued.has(`${range.stream}:${row.key}`)) enqueueLazy(db, range.stream, row.key, row.chain, range.detected_at, [range.connector], request.now);
    }
    const last = rows.at(-1)!.key;
    const items = rows.filter((row) => !queued.has(`${range.stream}:${row.key}`));
    if (items.length === 0) {
      advance(db, range, last, rows.length);
      continue;
    }
    // What the batch covers stays with its lease, in memory: a claim writes nothing (no fsync).
    const lease = leases.take(id, owner, request.now + request.leaseMs, { batch: { to: last, count: rows.length } });
    // The bodies as views of one buffer: one copy on the way to the daemon's thread, not one each.
    const bodies = Buffer.concat(items.map((row) => row.body));
    let offset = 0;
    return items.map((row) => {
      const text = bodies.subarray(offset, (offset += row.body.length));
      const recordId = `${range.stream}:${row.key}:${row.chain}`;
      return {
        delivery: {
          id: deliveryId(range.connector, recordId), connector: range.connector, recordId, stream: range.stream, orderKey: `${range.stream}:${row.key}`,
          seq: 0, status: 'active', enqueuedAt: range.enqueued_at, runAt: range.run_at, attempts: range.attempts + 1, fence: lease.fence,
          leaseUntil: lease.until, leaseOwner: owner, range: { stream: range.stream, part: range.part, key: row.key, chain: row.chain },
        },
        created: { stream: range.stream, key: row.key, chain: row.chain, detectedAt: range.detected_at, text },
      };
    });
  }
  return [];
}

/**
 * The outcome of one claimed batch of a range (all its settlements share its fence). All done: the
 * cursor moves on. All to be tried again, in its first attempts: the range waits, as one delivery
 * would (range-hold.ts). Otherwise each that is not done becomes a delivery row with its outcome, and
 * the cursor moves on. Each is an attempt
 * of its record, added to `attempts` for the caller to write.
 */
export function settleRange(db: Db, owner: string, batch: readonly Settlement[], attempts: AttemptRow[]): string[] {
  const first = batch[0]!;
  const { stream, part } = first.range!;
  const lease = leasesOf(db).end(leaseId(first.connector, stream, part), first.fence, owner);
  if (!lease?.batch) return [];
  const range = sql(db, 'SELECT * FROM outbox_range WHERE connector = ? AND stream = ? AND part = ?').get(first.connector, stream, part) as RangeRow | undefined;
  if (!range) return [];
  for (const s of batch) attempts.push(attemptRow(s, `${stream}:${s.range!.key}:${s.range!.chain}`, range.enqueued_at));
  const failed = batch.filter((s): s is Extract<Settlement, { runAt: number }> => s.status !== 'done');
  if (holdsRange(batch)) {
    sql(db, 'UPDATE outbox_range SET run_at = ?, attempts = ?, last_error = ?, last_attempt_at = ? WHERE connector = ? AND stream = ? AND part = ?').run(Math.min(...failed.map((s) => s.runAt)), Math.max(...failed.map((s) => s.attempts)), failed[0]!.lastError, first.at, first.connector, stream, part);
    return batch.map((s) => s.id);
  }
  for (const s of failed) {
    const { key, chain } = s.range!;
    enqueueLazy(db, stream, key, chain, range.detected_at, [s.connector], range.enqueued_at);
    sql(db, 'UPDATE outbox_delivery SET status = ?, run_at = ?, attempts = ?, last_error = ?, last_attempt_at = ? WHERE id = ?')
      .run(s.status, s.runAt, s.attempts, s.lastError, s.at, s.id);
  }
  advance(db, range, lease.batch.to, lease.batch.count);
  return batch.map((s) => s.id);
}

/**
 * Turns up to `limit` keys of each range of `stream` into deliveries of their own; returns what the
 * ranges still owe. The changes of a batch in flight become rows under the batch's lease (all of them
 * at once, whatever `limit`), so that its settlement settles them, as rows, and none is delivered
 * twice; a row that was queued already is not part of the batch and keeps its own lease.
 */
export function materializeCreated(db: Db, stream: SnapshotStream, limit: number, now: number): number {
  const leases = leasesOf(db);
  const ranges = sql(db, 'SELECT * FROM outbox_range WHERE stream = ?').all(stream) as RangeRow[];
  const seqOf = sql(db, `SELECT seq FROM outbox_delivery WHERE id = ? AND status = 'pending'`);
  for (const range of ranges) {
    const id = leaseId(range.connector, range.stream, range.part);
    const inFlight = leases.lease(id);
    leases.drop(id);
    const batch = inFlight?.batch;
    const rows = rowsAfter(db, range, Math.max(limit, batch?.count ?? 0));
    for (const row of rows) {
      const added = enqueueLazy(db, stream, row.key, row.chain, range.detected_at, [range.connector], now) > 0;
      if (!added || !batch || compareKeys(row.key, batch.to) > 0) continue;
      const rowId = deliveryId(range.connector, `${stream}:${row.key}:${row.chain}`);
      const head = seqOf.get(rowId) as { seq: number } | undefined;
      if (head) leases.share(rowId, head.seq, inFlight!);
    }
    if (rows.length === 0) drop(db, range);
    else advance(db, range, rows.at(-1)!.key, rows.length);
  }
  return createdPending(db, stream);
}

export function createdPending(db: Db, stream: SnapshotStream): number {
  return (sql(db, 'SELECT coalesce(sum(remaining), 0) AS n FROM outbox_range WHERE stream = ?').get(stream) as { n: number }).n;
}

export function rangeCounts(db: Db): Map<string, number> {
  const rows = sql(db, 'SELECT connector, sum(remaining) AS n FROM outbox_range GROUP BY connector').all() as { connector: string; n: number }[];
  return new Map(rows.map((r) => [r.connector, r.n]));
}

/** The earliest run time of the connector's ranges not in flight. */
export function rangeNextRunAt(db: Db, connector: string, now: number): number | undefined {
  const leases = leasesOf(db);
  const rows = sql(db, 'SELECT stream, part, run_at FROM outbox_range WHERE connector = ? ORDER BY run_at').all(connector) as { stream: SnapshotStream; part: number; run_at: number }[];
  return rows.find((r) => !leases.held(leaseId(connector, r.stream, r.part), now))?.run_at;
}

export function ranges(db: Db): CreatedRange[] {
  return (sql(db, 'SELECT * FROM outbox_range ORDER BY connector, stream, part').all() as RangeRow[]).map((r) => ({
    connector: r.connector, stream: r.stream, part: r.part, detectedAt: r.detected_at, remaining: r.remaining, upto: r.upto, runAt: r.run_at, attempts: r.attempts,
    ...(r.after === null ? {} : { after: r.after }),
    ...(r.last_error === null ? {} : { lastError: r.last_error }),
  }));
}
