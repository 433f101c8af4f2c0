import type Database from 'better-sqlite3';
import { hourOf, type Attempt, type AttemptFilter, type Run, type TallyEntry } from '../history-port.js';
import { attemptOutcome, changeTallies, prefixEnd } from '../history-rules.js';
import { toAttempt, toRun, type AttemptRow as AttemptDbRow, type RunRow } from '../history-rows.js';
import { pruneHead } from '../prune-head.js';
import type { Settlement, StatePatch } from '../port.js';
import { putState } from './state.js';
import { sql } from './statements.js';

/**
 * The console's history on SQLite (the port's HistoryStore): delivery attempts, runs and counts
 * per hour. Attempts are written by the settlement that records them (outbox.ts, ranges.ts), set-wise.
 */
type Db = Database.Database;

/** One attempt as a settlement writes it. */
export interface AttemptRow {
  r: string;
  c: string;
  e: number;
  a: number;
  o: Attempt['outcome'];
  h: number | null;
  d: number | null;
  x: string | null;
}

export function attemptRow(s: Settlement, recordId: string, enqueuedAt: number): AttemptRow {
  return {
    r: recordId, c: s.connector, e: enqueuedAt, a: s.at, o: attemptOutcome(s.status),
    h: s.httpStatus ?? null, d: s.durationMs ?? null, x: s.status === 'done' ? null : s.lastError,
  };
}

/**
 * The batch's attempts, in the transaction that settles them: a prepared single-row insert stepped
 * per attempt (in-process, no round trip; cheaper than one statement that parses the batch from a
 * JSON text), and one small upsert per (hour, connector, outcome) of their counts, grouped here: a
 * batch rarely spans more than one or two.
 */
export function recordAttempts(db: Db, replica: string, rows: readonly AttemptRow[]): void {
  if (rows.length === 0) return;
  const one = sql(db, 'INSERT INTO delivery_attempt (record_id, connector, enqueued_at, at, outcome, http_status, duration_ms, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  for (const r of rows) one.run(r.r, r.c, r.e, r.a, r.o, r.h, r.d, r.x);
  const counts = new Map<string, TallyEntry>();
  for (const row of rows) {
    const hour = hourOf(row.a);
    const label = `${row.c}:${row.o}`;
    const key = `${hour}\u0000${label}`;
    const seen = counts.get(key);
    if (seen) seen.n += 1;
    else counts.set(key, { kind: 'delivery', hour, label, n: 1 });
  }
  const add = sql(db, 'INSERT INTO tally (kind, hour, label, replica, n) VALUES (?, ?, ?, ?, ?) ON CONFLICT (kind, hour, label, replica) DO UPDATE SET n = n + excluded.n');
  for (const t of counts.values()) add.run(t.kind, t.hour, t.label, replica, t.n);
}

export function attempts(db: Db, filter: AttemptFilter): Attempt[] {
  const limit = Math.max(0, Math.floor(filter.limit));
  const rows: AttemptDbRow[] = [];
  if (filter.recordIds?.length) {
    rows.push(...(sql(db, `SELECT * FROM delivery_attempt WHERE record_id IN (SELECT value FROM json_each(?)) ORDER BY seq DESC LIMIT ?`)
      .all(JSON.stringify(filter.recordIds), limit) as AttemptDbRow[]));
  }
  const byPrefix = sql(db, 'SELECT * FROM delivery_attempt WHERE record_id >= ? AND record_id < ? ORDER BY seq DESC LIMIT ?');
  for (const prefix of filter.prefixes ?? []) if (prefix !== '') rows.push(...(byPrefix.all(prefix, prefixEnd(prefix), limit) as AttemptDbRow[]));
  const seen = new Set<number>();
  return rows.filter((r) => !seen.has(r.seq) && seen.add(r.seq)).sort((a, b) => b.seq - a.seq).slice(0, limit).map(toAttempt);
}

export function recordRun(db: Db, replica: string, run: Run, state: StatePatch): void {
  sql(db, `INSERT INTO run (kind, trigger, started_at, duration_ms, outcome, reason, message, counts, replica) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    .run(run.kind, run.trigger, run.startedAt, run.durationMs, run.outcome, run.reason ?? null, run.message ?? null, JSON.stringify(run.counts), run.replica ?? null);
  count(db, replica, changeTallies(run));
  putState(db, state);
}

export function runs(db: Db, query: { since: number; limit: number; before?: number }): Run[] {
  return (sql(db, 'SELECT * FROM run WHERE id < ? AND started_at >= ? ORDER BY id DESC LIMIT ?')
    .all(query.before ?? Number.MAX_SAFE_INTEGER, query.since, Math.max(0, Math.floor(query.limit))) as RunRow[]).map(toRun);
}

export function count(db: Db, replica: string, entries: readonly TallyEntry[]): void {
  if (entries.length === 0) return;
  sql(db, `INSERT INTO tally (kind, hour, label, replica, n)
    SELECT value->>'kind', value->>'hour', value->>'label', ?, sum(value->>'n') FROM json_each(?) WHERE true GROUP BY 1, 2, 3
    ON CONFLICT (kind, hour, label, replica) DO UPDATE SET n = n + excluded.n`).run(replica, JSON.stringify(entries));
}

export function tallies(db: Db, kind: string, since: number): TallyEntry[] {
  return sql(db, 'SELECT kind, hour, label, sum(n) AS n FROM tally WHERE kind = ? AND hour >= ? GROUP BY hour, label ORDER BY hour, label')
    .all(kind, hourOf(since)) as TallyEntry[];
}

const PARAMS = { before: '@before', limit: '@limit' };
export const PRUNE_ATTEMPTS = pruneHead('delivery_attempt', 'seq', 'at', PARAMS);
export const PRUNE_RUNS = pruneHead('run', 'id', 'started_at', PARAMS);

/** Attempts by their sequence and runs by their id, a chunk of each (prune-head.ts). */
export function prune(db: Db, before: { attempts: number; runs: number }, limit: number): number {
  const attemptsGone = sql(db, PRUNE_ATTEMPTS).run({ before: before.attempts, limit }).changes;
  const runsGone = sql(db, PRUNE_RUNS).run({ before: before.runs, limit }).changes;
  const talliesGone = sql(db, 'DELETE FROM tally WHERE hour < ?').run(hourOf(before.runs)).changes;
  return attemptsGone + runsGone + talliesGone;
}
