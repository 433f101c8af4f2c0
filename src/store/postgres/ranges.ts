import { compareKeys } from '../../streams/index.js';
import { attemptOutcome } from '../history-rules.js';
import type { ClaimRequest, Claimed, CreatedRange, Key, Settlement, SnapshotStream } from '../port.js';
import { holdsRange } from '../range-hold.js';
import { partsFor } from '../range-parts.js';
import { REPLICA_TTL_MS, TAKEOVER_GRACE_MS, deliveryId, snapshotTable } from '../tables.js';
import type { Db } from './db.js';
import { enqueueLazy } from './enqueue.js';
import { KEEP_ATTEMPTS } from './history.js';
import { keyFloor, sharedKey, type SharedKeyColumn } from './stream-tables.js';

/**
 * Created ranges on PostgreSQL: the layout of the SQLite ones (sqlite/ranges.ts), the lease in the
 * range's row (owner, time, fence) since replicas claim from the same ranges. The bounds (`after`,
 * `upto`, `claimed_to`) are keys: in the integer columns, or their text twins for a stream of string
 * keys (stream-tables.ts).
 */
interface RangeRow {
  connector: string;
  stream: SnapshotStream;
  part: number;
  detected_at: string;
  after: number | null;
  upto: number | null;
  remaining: number;
  enqueued_at: number;
  run_at: number;
  attempts: number;
  claimed_to: number | null;
  claimed_count: number | null;
  lease_owner: string | null;
  lease_until: number | null;
  fence: number;
  after_text: string | null;
  upto_text: string | null;
  claimed_to_text: string | null;
}

/** A bound of the range, from the column its stream's keys are in. */
const bound = (range: RangeRow, column: SharedKeyColumn): Key | undefined =>
  (range[sharedKey(range.stream, column) as keyof RangeRow] as Key | null) ?? undefined;
const uptoOf = (range: RangeRow): Key => bound(range, 'upto')!;

/** The ranges of each connector over the whole (just swapped in) snapshot of `stream`, in parts of about equal size (range-parts.ts). */
export async function createRanges(db: Db, stream: SnapshotStream, detectedAt: string, connectors: readonly string[], now: number): Promise<void> {
  const { rows: [size] } = await db.query<{ n: number }>(`SELECT count(*)::bigint AS n FROM ${snapshotTable(stream)}`);
  if (!size?.n) return;
  await db.query(`INSERT INTO outbox_range (connector, stream, part, detected_at, ${sharedKey(stream, 'after')}, ${sharedKey(stream, 'upto')}, remaining, enqueued_at, run_at)
    SELECT c.connector, $1, p.part, $2, p.after, p.upto, p.n, $3, $3
    FROM (SELECT part - 1 AS part, lag(max(key)) OVER (ORDER BY part) AS after, max(key) AS upto, count(*) AS n
      FROM (SELECT key, ntile($5) OVER (ORDER BY key) AS part FROM ${snapshotTable(stream)}) k GROUP BY part) p
    CROSS JOIN unnest($4::text[]) AS c(connector)`, [stream, detectedAt, now, connectors, partsFor(size.n)]);
  db.tell('outbox');
}

async function rowsAfter(db: Db, range: RangeRow, limit: number): Promise<{ key: Key; chain: string; body: string }[]> {
  return (await db.query<{ key: Key; chain: string; body: string }>(`SELECT key, chain, body FROM ${snapshotTable(range.stream)} WHERE key > $1 AND key <= $2 ORDER BY key LIMIT $3`,
    [bound(range, 'after') ?? keyFloor(range.stream), uptoOf(range), limit])).rows;
}

/** Moves the cursor past a batch and lets the range go (lease and claim); a range with nothing left goes. */
async function advance(db: Db, range: RangeRow, to: Key, count: number): Promise<void> {
  const remaining = Math.max(0, range.remaining - count);
  if (remaining === 0 || compareKeys(to, uptoOf(range)) >= 0) {
    await drop(db, range);
    return;
  }
  await db.query(`UPDATE outbox_range SET ${sharedKey(range.stream, 'after')} = $1, remaining = $2, attempts = 0, last_error = NULL,
    ${sharedKey(range.stream, 'claimed_to')} = NULL, claimed_count = NULL, lease_owner = NULL, lease_until = NULL WHERE connector = $3 AND stream = $4 AND part = $5`,
  [to, remaining, range.connector, range.stream, range.part]);
}

async function drop(db: Db, range: RangeRow): Promise<void> {
  await db.query('DELETE FROM outbox_range WHERE connector = $1 AND stream = $2 AND part = $3', [range.connector, range.stream, range.part]);
}

/** Up to `limit` created changes of a due range of the connector, leased to `owner` under one fence. */
export async function claimRange(db: Db, owner: string, request: ClaimRequest, limit: number): Promise<Claimed[]> {
  for (;;) {
    const { rows: [range] } = await db.query<RangeRow>(`SELECT * FROM outbox_range WHERE connector = $1 AND run_at <= $2
      AND (lease_until IS NULL OR lease_until <= $2::bigint - ${TAKEOVER_GRACE_MS}) ORDER BY run_at, stream, part LIMIT 1 FOR UPDATE SKIP LOCKED`, [request.connector, request.now]);
    if (!range) return [];
    const rows = await rowsAfter(db, range, limit);
    if (rows.length === 0) {
      await drop(db, range);
      continue;
    }
    // A key with a delivery queued already (from before the snapshot was fresh) waits behind it as a row.
    // A delivery is pending, dead or blocked (done ones are gone): each half is read from its partial
    // index. Without a status the query could use neither and read the whole table, for every batch.
    const { rows: queuedRows } = await db.query<{ order_key: string }>(`
      SELECT order_key FROM outbox_delivery WHERE connector = $1 AND order_key = ANY($2::text[]) AND status IN ('pending', 'dead')
      UNION ALL SELECT order_key FROM outbox_delivery WHERE connector = $1 AND order_key = ANY($2::text[]) AND status = 'blocked'`,
    [range.connector, rows.map((r) => `${range.stream}:${r.key}`)]);
    const queued = new Set(queuedRows.map((r) => r.order_key));
    const waiting = rows.filter((row) => queued.has(`${range.stream}:${row.key}`));
    if (waiting.length > 0) await enqueueLazy(db, range.stream, waiting, range.detected_at, [range.connector], request.now);
    const last = rows.at(-1)!.key;
    const items = rows.filter((row) => !queued.has(`${range.stream}:${row.key}`));
    if (items.length === 0) {
      await advance(db, range, last, rows.length);
      continue;
    }
    const until = request.now + request.leaseMs;
    const bodies = asBytes(items.map((row) => row.body));
    const { rows: [leased] } = await db.query<{ fence: number }>(`UPDATE outbox_range SET lease_owner = $1, lease_until = $2, fence = fence + 1,
      ${sharedKey(range.stream, 'claimed_to')} = $3, claimed_count = $4 WHERE connector = $5 AND stream = $6 AND part = $7 RETURNING fence`,
    [owner, until, last, rows.length, range.connector, range.stream, range.part]);
    return items.map((row, i) => {
      const recordId = `${range.stream}:${row.key}:${row.chain}`;
      return {
        delivery: {
          id: deliveryId(range.connector, recordId), connector: range.connector, recordId, stream: range.stream, orderKey: `${range.stream}:${row.key}`,
          seq: 0, status: 'active', enqueuedAt: range.enqueued_at, runAt: range.run_at, attempts: range.attempts + 1, fence: leased!.fence,
          leaseUntil: until, leaseOwner: owner, range: { stream: range.stream, part: range.part, key: row.key, chain: row.chain },
        },
        created: { stream: range.stream, key: row.key, chain: row.chain, detectedAt: range.detected_at, text: bodies[i]! },
      };
    });
  }
}

/**
 * The texts as views of one buffer of their UTF-8 bytes, as the SQLite store hands them over. The
 * strings the client parsed then die young: a batch waits on its connector for a while (a file's
 * sync), and strings kept that long are promoted into the old generation, where a first cycle's
 * deliveries left hundreds of MiB of them to a full collection; the bytes are outside the heap.
 */
function asBytes(texts: readonly string[]): Uint8Array[] {
  const lengths = texts.map((text) => Buffer.byteLength(text));
  const bytes = Buffer.allocUnsafe(lengths.reduce((sum, n) => sum + n, 0));
  let offset = 0;
  return texts.map((text) => {
    const start = offset;
    offset += bytes.write(text, start);
    return bytes.subarray(start, offset);
  });
}

/**
 * The outcome of one claimed batch of a range (see sqlite/ranges.ts), only while its lease still
 * holds; the statement that checks the lease keeps the batch's attempts (outbox.ts, KEEP_ATTEMPTS).
 */
export async function settleRange(db: Db, owner: string, batch: readonly Settlement[]): Promise<string[]> {
  const first = batch[0]!;
  const { stream, part } = first.range!;
  const { rows: [range] } = await db.query<RangeRow>(`WITH held AS (
      SELECT * FROM outbox_range WHERE connector = $1 AND stream = $2 AND part = $11 AND fence = $3 AND lease_owner = $4 AND ${sharedKey(stream, 'claimed_to')} IS NOT NULL FOR UPDATE
    ), settled AS (
      SELECT s.record_id, held.connector, held.enqueued_at, s.at, s.outcome, s.http_status, s.duration_ms, s.error
      FROM held CROSS JOIN unnest($5::text[], $6::bigint[], $7::text[], $8::int[], $9::int[], $10::text[]) AS s(record_id, at, outcome, http_status, duration_ms, error)
    )${KEEP_ATTEMPTS('$4')}
    SELECT * FROM held`, [
    first.connector, stream, first.fence, owner, batch.map((s) => `${stream}:${s.range!.key}:${s.range!.chain}`), batch.map((s) => s.at),
    batch.map((s) => attemptOutcome(s.status)), batch.map((s) => s.httpStatus ?? null), batch.map((s) => s.durationMs ?? null),
    batch.map((s) => (s.status === 'done' ? null : s.lastError)), part,
  ]);
  if (!range) return [];
  const failed = batch.filter((s): s is Extract<Settlement, { runAt: number }> => s.status !== 'done');
  if (holdsRange(batch)) {
    await db.query(`UPDATE outbox_range SET run_at = $1, attempts = $2, last_error = $3, last_attempt_at = $4, ${sharedKey(stream, 'claimed_to')} = NULL, claimed_count = NULL,
      lease_owner = NULL, lease_until = NULL WHERE connector = $5 AND stream = $6 AND part = $7`,
    [Math.min(...failed.map((s) => s.runAt)), Math.max(...failed.map((s) => s.attempts)), failed[0]!.lastError, first.at, first.connector, stream, part]);
    return batch.map((s) => s.id);
  }
  if (failed.length > 0) {
    await enqueueLazy(db, stream, failed.map((s) => s.range!), range.detected_at, [first.connector], range.enqueued_at);
    await db.query(`UPDATE outbox_delivery d SET status = s.status, run_at = s.run_at, attempts = s.attempts, last_error = s.last_error, last_attempt_at = s.at
      FROM unnest($1::text[], $2::text[], $3::bigint[], $4::int[], $5::text[], $6::bigint[]) AS s(id, status, run_at, attempts, last_error, at)
      WHERE d.id = ANY($1::text[]) AND d.id = s.id`, [
      failed.map((s) => s.id), failed.map((s) => s.status), failed.map((s) => s.runAt), failed.map((s) => s.attempts), failed.map((s) => s.lastError), failed.map((s) => s.at),
    ]);
  }
  await advance(db, range, bound(range, 'claimed_to')!, range.claimed_count ?? 0);
  return batch.map((s) => s.id);
}

/**
 * Turns up to `limit` keys of each range of `stream` into deliveries of their own; returns what the
 * ranges still owe. The changes of a batch in flight become rows under the batch's lease (owner,
 * time and fence; all of them at once, whatever `limit`), so that its settlement settles them as
 * rows (outbox.ts) and none is delivered twice; a row queued already is not part of the batch.
 */
export async function materializeCreated(db: Db, stream: SnapshotStream, limit: number, now: number): Promise<number> {
  const { rows: ranges } = await db.query<RangeRow>('SELECT * FROM outbox_range WHERE stream = $1 ORDER BY connector, part FOR UPDATE', [stream]);
  for (const range of ranges) {
    // A new fence: the range's batch in flight is no longer the range's to settle.
    await db.query(`UPDATE outbox_range SET fence = fence + 1, ${sharedKey(stream, 'claimed_to')} = NULL, lease_owner = NULL, lease_until = NULL
      WHERE connector = $1 AND stream = $2 AND part = $3`, [range.connector, stream, range.part]);
    const claimedTo = range.lease_owner === null ? undefined : bound(range, 'claimed_to');
    const rows = await rowsAfter(db, range, Math.max(limit, claimedTo === undefined ? 0 : range.claimed_count ?? 0));
    const added = rows.length === 0 ? new Set<string>() : await enqueueLazy(db, stream, rows, range.detected_at, [range.connector], now);
    const ids = claimedTo === undefined ? [] : rows.filter((row) => compareKeys(row.key, claimedTo) <= 0).map((row) => `${stream}:${row.key}:${row.chain}`).filter((id) => added.has(id));
    if (ids.length > 0) {
      await db.query(`UPDATE outbox_delivery SET lease_owner = $2, lease_until = $3, fence = $4, attempts = $5 WHERE id = ANY($1::text[]) AND status = 'pending'`,
        [ids.map((id) => deliveryId(range.connector, id)), range.lease_owner, range.lease_until, range.fence, range.attempts + 1]);
    }
    if (rows.length === 0) await drop(db, range);
    else await advance(db, range, rows.at(-1)!.key, rows.length);
  }
  return createdPending(db, stream);
}

export async function createdPending(db: Db, stream: SnapshotStream): Promise<number> {
  return (await db.query<{ n: number }>('SELECT coalesce(sum(remaining), 0)::bigint AS n FROM outbox_range WHERE stream = $1', [stream])).rows[0]!.n;
}

export async function rangeCounts(db: Db): Promise<Map<string, number>> {
  const { rows } = await db.query<{ connector: string; n: number }>('SELECT connector, sum(remaining)::bigint AS n FROM outbox_range GROUP BY connector');
  return new Map(rows.map((r) => [r.connector, r.n]));
}

/** The earliest run time of the connector's ranges not in flight. */
export async function rangeNextRunAt(db: Db, connector: string): Promise<number | undefined> {
  const { rows } = await db.query<{ at: number | null }>(`SELECT min(GREATEST(run_at, COALESCE(lease_until + ${TAKEOVER_GRACE_MS}, 0))) AS at
    FROM outbox_range WHERE connector = $1`, [connector]);
  return rows[0]?.at ?? undefined;
}

export async function ranges(db: Db): Promise<CreatedRange[]> {
  const { rows } = await db.query<RangeRow & { last_error: string | null }>('SELECT * FROM outbox_range ORDER BY connector, stream, part');
  return rows.map((r) => ({
    connector: r.connector, stream: r.stream, part: r.part, detectedAt: r.detected_at, remaining: r.remaining, upto: uptoOf(r), runAt: r.run_at, attempts: r.attempts,
    ...(bound(r, 'after') === undefined ? {} : { after: bound(r, 'after') }),
    ...(r.last_error === null ? {} : { lastError: r.last_error }),
  }));
}

/** Leases of ranges past their time, or held by replicas (not `self`) that stopped, are free again. */
export async function reclaimRanges(db: Db, now: number, self: string): Promise<number> {
  const result = await db.query(`UPDATE outbox_range SET lease_owner = NULL, lease_until = NULL, claimed_to = NULL, claimed_to_text = NULL, claimed_count = NULL
    WHERE lease_owner IS NOT NULL AND (lease_until <= $1::bigint - ${TAKEOVER_GRACE_MS} OR (lease_owner <> $3 AND lease_owner NOT IN (SELECT id FROM replica WHERE heartbeat_at > $2)))`, [now, now - REPLICA_TTL_MS, self]);
  return result.rowCount ?? 0;
}
