import { HOUR_MS, hourOf, type Attempt, type AttemptFilter, type Run, type TallyEntry } from '../history-port.js';
import { changeTallies, prefixEnd } from '../history-rules.js';
import { toAttempt, toRun, type AttemptRow, type RunRow } from '../history-rows.js';
import { pruneHead } from '../prune-head.js';
import type { StatePatch } from '../port.js';
import type { Db } from './db.js';
import { putState } from './state.js';

/**
 * The console's history on PostgreSQL (the layout of sqlite/history.ts). Attempts are written by
 * the statements that settle deliveries, which end with KEEP_ATTEMPTS: no round trip of their own.
 */

/**
 * What a statement that settles deliveries also writes, in the same round trip, from its CTE
 * `settled` (record_id, connector, enqueued_at, at, outcome, http_status, duration_ms, error): each as
 * an attempt of its record, and the attempts counted per hour, connector and outcome in this
 * replica's own tally rows (`owner` names its parameter), so replicas settling at once never wait
 * on one another's count.
 */
export const KEEP_ATTEMPTS = (owner: string) => `, kept AS (
    INSERT INTO delivery_attempt (record_id, connector, enqueued_at, at, outcome, http_status, duration_ms, error)
    SELECT record_id, connector, enqueued_at, at, outcome, http_status, duration_ms, error FROM settled
  ), counted AS (
    INSERT INTO tally (kind, hour, label, replica, n)
    SELECT 'delivery', at / ${HOUR_MS} * ${HOUR_MS}, connector || ':' || outcome, ${owner}, count(*) FROM settled GROUP BY 2, 3
    ON CONFLICT (kind, hour, label, replica) DO UPDATE SET n = tally.n + excluded.n
  )`;

export async function attempts(db: Db, filter: AttemptFilter): Promise<Attempt[]> {
  const prefixes = (filter.prefixes ?? []).filter((p) => p !== '');
  // Each prefix a range of the bytewise index on record_id.
  const { rows } = await db.query<AttemptRow>(`SELECT DISTINCT ON (a.seq) a.* FROM (
      SELECT * FROM delivery_attempt WHERE record_id = ANY($1::text[])
      UNION ALL SELECT d.* FROM unnest($2::text[], $3::text[]) AS p(low, high)
        CROSS JOIN LATERAL (SELECT * FROM delivery_attempt WHERE record_id >= p.low AND record_id < p.high ORDER BY seq DESC LIMIT $4) d
    ) a ORDER BY a.seq DESC LIMIT $4`, [filter.recordIds ?? [], prefixes, prefixes.map(prefixEnd), Math.max(0, Math.floor(filter.limit))]);
  return rows.map(toAttempt);
}

export async function recordRun(db: Db, replica: string, run: Run, state: StatePatch): Promise<void> {
  await db.query(`INSERT INTO run (kind, trigger, started_at, duration_ms, outcome, reason, message, counts, replica) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [run.kind, run.trigger, run.startedAt, run.durationMs, run.outcome, run.reason ?? null, run.message ?? null, JSON.stringify(run.counts), run.replica ?? null]);
  await count(db, replica, changeTallies(run));
  await putState(db, state);
}

export async function runs(db: Db, query: { since: number; limit: number; before?: number }): Promise<Run[]> {
  const { rows } = await db.query<RunRow>('SELECT * FROM run WHERE id < $1 AND started_at >= $2 ORDER BY id DESC LIMIT $3',
    [query.before ?? Number.MAX_SAFE_INTEGER, query.since, Math.max(0, Math.floor(query.limit))]);
  return rows.map(toRun);
}

export async function count(db: Db, replica: string, entries: readonly TallyEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await db.query(`INSERT INTO tally (kind, hour, label, replica, n)
    SELECT kind, hour, label, $1, sum(n) FROM json_to_recordset($2::json) AS t(kind text, hour bigint, label text, n bigint) GROUP BY 1, 2, 3
    ON CONFLICT (kind, hour, label, replica) DO UPDATE SET n = tally.n + excluded.n`, [replica, JSON.stringify(entries)]);
}

export async function tallies(db: Db, kind: string, since: number): Promise<TallyEntry[]> {
  const { rows } = await db.query<TallyEntry>(`SELECT kind, hour, label, sum(n)::bigint AS n FROM tally WHERE kind = $1 AND hour >= $2
    GROUP BY kind, hour, label ORDER BY hour, label`, [kind, hourOf(since)]);
  return rows;
}

const PARAMS = { before: '$1', limit: '$2' };

/** As on SQLite: attempts by their sequence and runs by their id, a chunk of each (prune-head.ts). */
export async function prune(db: Db, before: { attempts: number; runs: number }, limit: number): Promise<number> {
  const attemptsGone = await db.query(pruneHead('delivery_attempt', 'seq', 'at', PARAMS), [before.attempts, limit]);
  const runsGone = await db.query(pruneHead('run', 'id', 'started_at', PARAMS), [before.runs, limit]);
  const talliesGone = await db.query('DELETE FROM tally WHERE hour < $1', [hourOf(before.runs)]);
  return (attemptsGone.rowCount ?? 0) + (runsGone.rowCount ?? 0) + (talliesGone.rowCount ?? 0);
}
