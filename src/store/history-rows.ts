import type { Attempt, Person, Run } from './history-port.js';
import type { SnapshotStream } from './port.js';

/** A `run` row as both engines read it back. */
export interface RunRow {
  id: number;
  kind: Run['kind'];
  trigger: string;
  started_at: number;
  duration_ms: number;
  outcome: Run['outcome'];
  reason: string | null;
  message: string | null;
  counts: string;
  replica: string | null;
}

export function toRun(row: RunRow): Run {
  return {
    id: row.id, kind: row.kind, trigger: row.trigger, startedAt: row.started_at, durationMs: row.duration_ms, outcome: row.outcome,
    counts: JSON.parse(row.counts) as Run['counts'],
    ...(row.reason === null ? {} : { reason: row.reason }),
    ...(row.message === null ? {} : { message: row.message }),
    ...(row.replica === null ? {} : { replica: row.replica }),
  };
}

/** A `person` row (the name index) as both engines read it back. */
export interface PersonRow {
  stream: SnapshotStream;
  key: number;
  chain: string;
  user_id: number | null;
  name: string;
  email: string | null;
}

export const toPerson = (row: PersonRow): Person => ({
  stream: row.stream, key: row.key, chain: row.chain, name: row.name,
  ...(row.user_id === null ? {} : { userId: row.user_id }),
  ...(row.email === null ? {} : { email: row.email }),
});

/** A `delivery_attempt` row as both engines read it back. */
export interface AttemptRow {
  seq: number;
  record_id: string;
  connector: string;
  enqueued_at: number;
  at: number;
  outcome: Attempt['outcome'];
  http_status: number | null;
  duration_ms: number | null;
  error: string | null;
}

export const toAttempt = (row: Omit<AttemptRow, 'seq'>): Attempt => ({
  recordId: row.record_id, connector: row.connector, enqueuedAt: row.enqueued_at, at: row.at, outcome: row.outcome,
  ...(row.http_status === null ? {} : { httpStatus: row.http_status }),
  ...(row.duration_ms === null ? {} : { durationMs: row.duration_ms }),
  ...(row.error === null ? {} : { error: row.error }),
});
