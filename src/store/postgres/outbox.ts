import type {
  ClaimRequest, Claimed, DeadChunk, Delivery, DeliveryFilter, ListedDelivery, OutboxCounts, RetryTarget, Settlement, SnapshotStream,
} from '../port.js';
import { REPLICA_TTL_MS, SNAPSHOT_STREAMS, TAKEOVER_GRACE_MS, snapshotTable } from '../tables.js';
import type { Db } from './db.js';
import { rowDelivery, type DeliveryRow } from '../delivery-rows.js';
import { groupBy } from '../group-by.js';
import { KEEP_ATTEMPTS } from './history.js';
import { claimLog, getOwed, listOwed, logNextRunAt, markLog, merged, owedCounts, settleLog, sweepLog } from './log.js';
import { freeLost, type Held } from './lost-claims.js';
import { claimRange, rangeCounts, rangeNextRunAt, reclaimRanges, settleRange } from './ranges.js';
import { sharedKey } from './stream-tables.js';

/**
 * The outbox on PostgreSQL: the layout of the SQLite one (sqlite/outbox.ts), in set-wise statements
 * so a batch costs a few round trips whatever its size. Replicas claim with FOR UPDATE SKIP LOCKED;
 * the unique index `outbox_head` makes producers of one key wait for each other, so the key's
 * sequence order is its commit order. A claimed delivery stays `pending`; its lease (owner, time,
 * fence) is what marks it in flight, and as no index covers those columns a claim can be a HOT update
 * (no index entry written, where the page has room: docs/store.md) and a lease that ran out needs
 * nobody to return it.
 */
/** A stored delivery as it stands at `now`: pending under a lease that holds is in flight. */
export function toDelivery(row: DeliveryRow, now: number): Delivery {
  const leased = row.status === 'pending' && row.lease_until !== null && row.lease_until > now;
  return rowDelivery(row, leased ? 'active' : row.status);
}

/** The snapshot row of each created change without a text of its own, by its key's column (stream-tables.ts). */
const LAZY_JOINS = SNAPSHOT_STREAMS.map((s) => `LEFT JOIN ${snapshotTable(s)} s_${s} ON r.snapshot_stream = '${s}' AND r.body IS NULL AND r.record_text IS NULL AND s_${s}.key = r.${sharedKey(s, 'snapshot_key')}`).join(' ');
const LAZY_TEXT = `COALESCE(${SNAPSHOT_STREAMS.map((s) => `CASE WHEN s_${s}.chain = r.snapshot_chain THEN s_${s}.body END`).join(', ')})`;

interface RecordRow {
  id: string;
  body: string | null;
  snapshot_stream: SnapshotStream | null;
  snapshot_key: number | null;
  snapshot_text_key: string | null;
  snapshot_chain: string | null;
  detected_at: string | null;
  text: string | null;
}

/** Claims a batch; `held` first frees this replica's leases of the connector that no batch of it holds (lost-claims.ts). */
export async function claim(db: Db, owner: string, request: ClaimRequest, held?: Held): Promise<Claimed[]> {
  if (held) await freeLost(db, owner, request.connector, held);
  // `= ANY(ARRAY(…))`, not a join: the planner then always finds the claimed rows by their key.
  const { rows } = await db.query<DeliveryRow>(`UPDATE outbox_delivery SET attempts = attempts + 1, lease_owner = $4, lease_until = $5, fence = fence + 1
    WHERE seq = ANY(ARRAY(SELECT seq FROM outbox_delivery WHERE connector = $1 AND status = 'pending' AND run_at <= $2
      AND (lease_until IS NULL OR lease_until <= $2::bigint - ${TAKEOVER_GRACE_MS}) ORDER BY run_at, seq LIMIT $3 FOR UPDATE SKIP LOCKED))
    RETURNING *`, [request.connector, request.now, request.limit, owner, request.now + request.leaseMs]);
  rows.sort((a, b) => a.run_at - b.run_at || a.seq - b.seq);
  const own = await claimedRows(db, rows, request.now);
  if (own.length >= request.limit) return own;
  const logged = await claimLog(db, owner, request, request.limit - own.length);
  const taken = own.length + logged.length;
  return taken < request.limit ? [...own, ...logged, ...(await claimRange(db, owner, request, request.limit - taken))] : [...own, ...logged];
}

async function claimedRows(db: Db, rows: readonly DeliveryRow[], now: number): Promise<Claimed[]> {
  if (rows.length === 0) return [];
  // One statement, so a snapshot row and its record's own text are read as of one moment.
  const records = await db.query<RecordRow>(`SELECT r.id, r.body, r.snapshot_stream, r.snapshot_key, r.snapshot_text_key, r.snapshot_chain, r.detected_at,
      COALESCE(r.record_text, ${LAZY_TEXT}) AS text FROM outbox_record r ${LAZY_JOINS} WHERE r.id = ANY($1::text[])`, [rows.map((r) => r.record_id)]);
  const byId = new Map(records.rows.map((r) => [r.id, r]));
  return rows.map((row) => {
    const delivery = toDelivery(row, now);
    const r = byId.get(row.record_id);
    if (!r) return { delivery };
    if (r.body !== null) return { delivery, json: r.body };
    const key = r.snapshot_key ?? r.snapshot_text_key;
    if (r.text === null || r.snapshot_stream === null || key === null || r.snapshot_chain === null || r.detected_at === null) return { delivery };
    return { delivery, created: { stream: r.snapshot_stream, key, chain: r.snapshot_chain, detectedAt: r.detected_at, text: r.text } };
  });
}

/** Each delivery that settles is kept as an attempt, by the statement that settles it (KEEP_ATTEMPTS). */
export async function settle(db: Db, owner: string, settlements: readonly Settlement[]): Promise<string[]> {
  const fromRanges = groupBy(settlements.filter((s) => s.range), (s) => `${s.connector}\u0000${s.range!.stream}\u0000${s.range!.part}`);
  const settled = new Set<string>();
  for (const batch of fromRanges.values()) for (const id of await settleRange(db, owner, batch)) settled.add(id);
  for (const id of await settleLog(db, owner, settlements.filter((s) => s.log))) settled.add(id);
  // A range's change whose batch's lease moved to its row (materializeCreated) settles as that row.
  const own = settlements.filter((s) => !s.log && !(s.range && settled.has(s.id)));
  const done = own.filter((s) => s.status === 'done');
  const failed = own.filter((s): s is Extract<Settlement, { runAt: number }> => s.status !== 'done');
  // By `= ANY`, each row's fence looked up beside it: a join with the list would scan the table.
  const finished = done.length === 0 ? [] : (await db.query<{ id: string; connector: string; order_key: string; record_id: string; at: number }>(`
    WITH finished AS (
      DELETE FROM outbox_delivery WHERE id = ANY($1::text[]) AND status = 'pending' AND lease_owner = $3
        AND fence = ($2::bigint[])[array_position($1::text[], id)]
      RETURNING id, connector, order_key, record_id, enqueued_at
    ), settled AS (
      SELECT f.*, s.at, 'done' AS outcome, s.http_status, s.duration_ms, NULL::text AS error
      FROM finished f JOIN unnest($1::text[], $4::bigint[], $5::int[], $6::int[]) AS s(id, at, http_status, duration_ms) ON s.id = f.id
    )${KEEP_ATTEMPTS('$3')}
    SELECT id, connector, order_key, record_id, at FROM settled`,
  [done.map((s) => s.id), done.map((s) => s.fence), owner, done.map((s) => s.at), done.map((s) => s.httpStatus ?? null), done.map((s) => s.durationMs ?? null)])).rows;
  const retried = failed.length === 0 ? [] : (await db.query<{ id: string }>(`
    WITH settled AS (
      UPDATE outbox_delivery d SET status = s.status, last_attempt_at = s.at, lease_owner = NULL, lease_until = NULL,
        run_at = s.run_at, attempts = s.attempts, last_error = s.last_error
      FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::bigint[], $6::int[], $7::text[], $9::int[], $10::int[])
        AS s(id, fence, status, at, run_at, attempts, last_error, http_status, duration_ms)
      WHERE d.id = ANY($1::text[]) AND d.id = s.id AND d.status = 'pending' AND d.fence = s.fence AND d.lease_owner = $8
      RETURNING d.id, d.connector, d.record_id, d.enqueued_at, s.at, CASE s.status WHEN 'pending' THEN 'retry' ELSE 'dead' END AS outcome,
        s.http_status, s.duration_ms, s.last_error AS error
    )${KEEP_ATTEMPTS('$8')}
    SELECT id FROM settled`, [
    failed.map((s) => s.id), failed.map((s) => s.fence), failed.map((s) => s.status), failed.map((s) => s.at),
    failed.map((s) => s.runAt), failed.map((s) => s.attempts), failed.map((s) => s.lastError), owner,
    failed.map((s) => s.httpStatus ?? null), failed.map((s) => s.durationMs ?? null),
  ])).rows;
  if (finished.length > 0) {
    // The oldest delivery waiting behind each finished head becomes the head, its retry window
    // starting then: one that waited behind a dead head for longer than delivery.maxAgeHours would
    // otherwise be dead after its first failed attempt.
    const promoted = await db.query(`UPDATE outbox_delivery d SET status = 'pending', enqueued_at = GREATEST(d.enqueued_at, n.at) FROM (
        SELECT DISTINCT ON (w.connector, w.order_key) w.seq, f.at FROM outbox_delivery w
        JOIN unnest($1::text[], $2::text[], $3::bigint[]) AS f(connector, order_key, at) ON w.connector = f.connector AND w.order_key = f.order_key
        WHERE w.status = 'blocked' ORDER BY w.connector, w.order_key, w.seq) n WHERE d.seq = n.seq`,
    [finished.map((r) => r.connector), finished.map((r) => r.order_key), finished.map((r) => r.at)]);
    // The next record of a key goes out only once the one before it is done for good: a settlement
    // that lets one go commits to disk, whatever the transaction was begun with.
    if (promoted.rowCount) await db.query('SET LOCAL synchronous_commit TO ON');
    // Each record once per settle (one connector's batch): its count goes down by one, and the record
    // goes with its last delivery. The two parts touch disjoint rows: a statement's parts all see the
    // rows as they were, and a row changed by one part is not changed by another (a DELETE of a row
    // that the statement's UPDATE lowered to 0 deletes nothing).
    const { rows: lowered } = await db.query<{ id: string; pending: number }>(`WITH gone AS (DELETE FROM outbox_record WHERE id = ANY($1::text[]) AND pending <= 1 RETURNING id)
      UPDATE outbox_record SET pending = pending - 1 WHERE id = ANY($1::text[]) AND id NOT IN (SELECT id FROM gone) RETURNING id, pending`, [finished.map((r) => r.record_id)]);
    // Another connector's settlement of the same record lowered it meanwhile: the DELETE saw 2, the
    // UPDATE waited for that one's commit and lowered its 1 to 0. A statement of its own sees that.
    const emptied = lowered.filter((r) => r.pending <= 0).map((r) => r.id);
    if (emptied.length > 0) await db.query('DELETE FROM outbox_record WHERE id = ANY($1::text[]) AND pending <= 0', [emptied]);
  }
  for (const r of [...finished, ...retried]) settled.add(r.id);
  // A settlement that names no place may still be of a log record this replica holds (one made by hand).
  const unmarked = own.filter((s) => !s.range && !settled.has(s.id));
  if (unmarked.length > 0) for (const id of await settleLog(db, owner, await markLog(db, owner, unmarked))) settled.add(id);
  return settlements.filter((s) => settled.has(s.id)).map((s) => s.id);
}

/** A delivery retried by hand: due at $1, its attempts and lease cleared. */
const RESET = `status = 'pending', attempts = 0, enqueued_at = $1, run_at = $1, lease_owner = NULL, lease_until = NULL`;

export async function retry(db: Db, target: RetryTarget, now: number): Promise<string[]> {
  // A delivery in flight is left alone: its outcome decides.
  const { rows } = await db.query<{ id: string; seq: number }>(`UPDATE outbox_delivery SET ${RESET} WHERE id = ANY($2::text[]) AND status IN ('dead', 'pending')
      AND (lease_until IS NULL OR lease_until <= $1) RETURNING id, seq`, [now, 'id' in target ? [target.id] : target.ids]);
  if (rows.length > 0) db.tell('outbox');
  return rows.sort((a, b) => a.seq - b.seq).map((r) => r.id);
}

/** As on SQLite (sqlite/outbox.ts): a chunk of dead deliveries in enqueue order, by the rows' sequence. */
export async function retryDead(db: Db, chunk: DeadChunk, now: number): Promise<{ ids: string[]; last: number | undefined }> {
  const { rows } = await db.query<{ id: string; seq: number }>(`UPDATE outbox_delivery SET ${RESET}
    WHERE seq IN (SELECT seq FROM outbox_delivery WHERE status = 'dead' AND ($2::text IS NULL OR connector = $2) AND seq > $3 ORDER BY seq LIMIT $4)
    RETURNING id, seq`, [now, chunk.connector ?? null, chunk.after, chunk.limit]);
  if (rows.length > 0) db.tell('outbox');
  const sorted = rows.sort((a, b) => a.seq - b.seq);
  return { ids: sorted.map((r) => r.id), last: sorted.at(-1)?.seq };
}

/** As on SQLite (sqlite/outbox.ts): a chunk of the dead in enqueue order, by the rows' sequence. */
export async function listDead(db: Db, chunk: DeadChunk, now: number): Promise<ListedDelivery[]> {
  const { rows } = await db.query<DeliveryRow>(`SELECT * FROM outbox_delivery
    WHERE status = 'dead' AND ($1::text IS NULL OR connector = $1) AND seq > $2 ORDER BY seq LIMIT $3`, [chunk.connector ?? null, chunk.after, chunk.limit]);
  return rows.map((row) => toDelivery(row, now));
}

export async function getDelivery(db: Db, id: string, now: number): Promise<Delivery | undefined> {
  const { rows } = await db.query<DeliveryRow>('SELECT * FROM outbox_delivery WHERE id = $1', [id]);
  return rows[0] ? toDelivery(rows[0], now) : getOwed(db, id, now);
}

const STATES: Record<NonNullable<DeliveryFilter['state']>, string> = {
  pending: `status IN ('pending', 'blocked')`,
  active: `status = 'pending' AND lease_until > $2`,
  dead: `status = 'dead'`,
};

export async function list(db: Db, filter: DeliveryFilter = {}, now: number): Promise<ListedDelivery[]> {
  const { rows } = await db.query<DeliveryRow & { waiting_for: string | null }>(`SELECT d.*, (SELECT h.id FROM outbox_delivery h WHERE d.status = 'blocked'
      AND h.connector = d.connector AND h.order_key = d.order_key AND h.status IN ('pending', 'dead')) AS waiting_for
    FROM outbox_delivery d WHERE ${filter.state ? STATES[filter.state] : 'true'} AND ($1::text IS NULL OR connector = $1) AND $2::bigint IS NOT NULL ORDER BY seq LIMIT $3`,
  [filter.connector ?? null, now, filter.limit === undefined ? null : Math.max(0, Math.floor(filter.limit))]);
  const listed = rows.map((row): ListedDelivery => {
    const delivery = toDelivery(row, now);
    if (delivery.status !== 'blocked') return delivery;
    return { ...delivery, status: 'pending', ...(row.waiting_for === null ? {} : { waitingFor: row.waiting_for }) };
  });
  return merged(listed, await listOwed(db, filter, now), filter.limit);
}

export async function counts(db: Db): Promise<Map<string, OutboxCounts>> {
  const { rows } = await db.query<{ connector: string; depth: number; dead: number }>(`SELECT connector,
      count(*) FILTER (WHERE status <> 'dead')::int AS depth, count(*) FILTER (WHERE status = 'dead')::int AS dead
    FROM outbox_delivery GROUP BY connector`);
  const out = new Map<string, OutboxCounts>(rows.map((r) => [r.connector, { depth: r.depth, dead: r.dead }]));
  for (const [connector, n] of [...await rangeCounts(db), ...await owedCounts(db)]) {
    out.set(connector, { depth: (out.get(connector)?.depth ?? 0) + n, dead: out.get(connector)?.dead ?? 0 });
  }
  return out;
}

/** Rows of the ready index the first page of nextRunAt reads; each further page reads four times more, up to NEXT_PAGE_MAX. */
const NEXT_PAGE = 16;
const NEXT_PAGE_MAX = 1024;
const NEXT_FIRST = `SELECT seq, run_at, lease_until FROM outbox_delivery WHERE connector = $1 AND status = 'pending' ORDER BY run_at, seq LIMIT $2`;
const NEXT_AFTER = `SELECT seq, run_at, lease_until FROM outbox_delivery WHERE connector = $1 AND status = 'pending'
  AND (run_at, seq) > ($3::bigint, $4::bigint) ORDER BY run_at, seq LIMIT $2`;

/**
 * The earliest time one of the connector's pending deliveries is due: its run time, or for one in
 * flight the end of its lease and the grace after it. Read in the ready index's order, the first
 * delivery whose lease does not put it off past its run time is due at that run time, which no
 * delivery after it comes before: the walk ends there, having read only those in flight ahead of it
 * (a min over every pending delivery would read a whole backlog at each idle claim).
 */
export async function nextRunAt(db: Db, connector: string): Promise<number | undefined> {
  let at = Math.min(await rangeNextRunAt(db, connector) ?? Infinity, await logNextRunAt(db, connector) ?? Infinity);
  let after: { seq: number; run_at: number } | undefined;
  for (let limit = NEXT_PAGE; ; limit = Math.min(limit * 4, NEXT_PAGE_MAX)) {
    const { rows } = await db.query<{ seq: number; run_at: number; lease_until: number | null }>(
      after ? NEXT_AFTER : NEXT_FIRST, after ? [connector, limit, after.run_at, after.seq] : [connector, limit]);
    for (const row of rows) {
      const due = Math.max(row.run_at, row.lease_until === null ? 0 : row.lease_until + TAKEOVER_GRACE_MS);
      at = Math.min(at, due);
      if (due === row.run_at) return at;
    }
    if (rows.length < limit) return at === Infinity ? undefined : at;
    after = rows[rows.length - 1];
  }
}

export async function sweep(db: Db, now: number, self: string): Promise<{ reclaimed: number }> {
  // A claim takes a delivery whose lease ran out again by itself; ending such leases here says how
  // many there were, and ends early those of a replica that stopped (no index: a scan every sweep).
  // Never its own: a replica that sweeps is running, whether or not its heartbeat could be written.
  const reclaimed = await db.query(`UPDATE outbox_delivery SET lease_owner = NULL, lease_until = NULL
    WHERE lease_owner IS NOT NULL AND (lease_until <= $1::bigint - ${TAKEOVER_GRACE_MS} OR (lease_owner <> $3 AND lease_owner NOT IN (SELECT id FROM replica WHERE heartbeat_at > $2)))`,
  [now, now - REPLICA_TTL_MS, self]);
  const total = (reclaimed.rowCount ?? 0) + (await reclaimRanges(db, now, self)) + (await sweepLog(db, now, self)) + (await promoteOrphans(db, now));
  if (total > 0) db.tell('outbox');
  return { reclaimed: total };
}

/**
 * A delivery waits `blocked` behind the head of its key, and a settlement that finishes a head makes
 * the oldest waiting one the head. One race escapes that: an enqueue that saw the head (so inserted
 * its delivery as blocked) and a settlement that finished the head, committing side by side, the
 * settlement not seeing the uncommitted blocked row. Such a delivery waits behind nothing; the sweep
 * makes the oldest of each such key the head, so it goes out at most a sweep later, still in order.
 */
async function promoteOrphans(db: Db, now: number): Promise<number> {
  const { rowCount } = await db.query(`UPDATE outbox_delivery SET status = 'pending', enqueued_at = GREATEST(enqueued_at, $1::bigint) WHERE seq = ANY(ARRAY(
      SELECT DISTINCT ON (b.connector, b.order_key) b.seq FROM outbox_delivery b
      WHERE b.status = 'blocked' AND NOT EXISTS (SELECT 1 FROM outbox_delivery h
        WHERE h.connector = b.connector AND h.order_key = b.order_key AND h.status IN ('pending', 'dead'))
      ORDER BY b.connector, b.order_key, b.seq))`, [now]);
  return rowCount ?? 0;
}
