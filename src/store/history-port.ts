import type { SnapshotStream, StatePatch } from './port.js';

/**
 * What the store keeps for the operator console (README "Operator console"), beside the queue itself:
 * every attempt to deliver a record (kept `delivery.historyDays`), the poll cycles and roster exports
 * (runs), counts per hour, and the names of the people in the snapshot. All of it lives in the store,
 * so every replica's console shows the same.
 */

/** One attempt to deliver a record to a connector. Times are epoch ms. */
export interface Attempt {
  recordId: string;
  connector: string;
  /** When the delivery was enqueued: the first of a record's attempts names when it was made. */
  enqueuedAt: number;
  at: number;
  outcome: 'done' | 'retry' | 'dead';
  /** The receiver's HTTP status, when it answered one. */
  httpStatus?: number;
  /** How long the connector's call took (a batch's records share it). */
  durationMs?: number;
  /** The whole error (it can quote a receiver's answer: shown behind the admin token only). */
  error?: string;
}

export type RunKind = 'poll' | 'export';

/** A finished poll cycle or roster export. */
export interface Run {
  /** Given by the store, increasing. */
  id?: number;
  kind: RunKind;
  /** Who started it: schedule, start-up, manual, admin, console, export:… */
  trigger: string;
  startedAt: number;
  durationMs: number;
  outcome: 'ok' | 'aborted' | 'failed';
  reason?: string;
  message?: string;
  /** Per stream, per op (`created`, `updated`, `deleted`, `fetched`, `rows`, …). */
  counts: Record<string, Record<string, number>>;
  replica?: string;
}

/**
 * Counts per hour: `kind` says what is counted (`webhook`, `delivery`, `change`), `label` which
 * count (`stored`, `rejected:stale`, `files:done`, `students:updated`). Replicas add to their own
 * rows, which readers sum.
 */
export interface TallyEntry {
  /** The hour's start, epoch ms (a multiple of 3,600,000). */
  hour: number;
  kind: string;
  label: string;
  n: number;
}

export const HOUR_MS = 3_600_000;
export const hourOf = (ms: number): number => Math.floor(ms / HOUR_MS) * HOUR_MS;

export interface AttemptFilter {
  recordIds?: readonly string[];
  /** Records whose id starts with one of these (`students:123:`: every change of student 123). */
  prefixes?: readonly string[];
  limit: number;
}

export interface HistoryStore {
  /** Records a finished run, its changes counted per hour, and `state` in the same transaction. */
  recordRun(run: Run, state?: StatePatch): Promise<void>;
  /** Runs started at or after `since`, newest first, at most `limit`, only those before run `before`. */
  runs(query: { since: number; limit: number; before?: number }): Promise<Run[]>;
  /** Adds counts to their hours. */
  count(entries: readonly TallyEntry[]): Promise<void>;
  /** The counts of `kind` from the hour of `since` on, summed over replicas, by hour then label. */
  tallies(kind: string, since: number): Promise<TallyEntry[]>;
  /** Attempts of the records, newest first. */
  attempts(filter: AttemptFilter): Promise<Attempt[]>;
  /**
   * Forgets attempts made before `attempts`, and runs and counts before `runs`: at most `limit`
   * attempts and `limit` runs, the oldest first, in one transaction. Resolves with how many rows
   * went; fewer than `limit` says that none of them is left.
   */
  prune(before: { attempts: number; runs: number }, limit: number): Promise<number>;
}

/** Someone in the snapshot, as the console names them. */
export interface Person {
  /** A people stream's (src/streams/): their keys are integers. */
  stream: SnapshotStream;
  key: number;
  /** The snapshot row's chain when it was indexed (a first cycle's created change is `<stream>:<key>:<chain>`). */
  chain: string;
  /** A student's own user id; a user's id. */
  userId?: number;
  name: string;
  email?: string;
}

export interface PeopleStore {
  /**
   * Brings the name index a step closer to the snapshot (a bounded number of rows a call); resolves
   * with true while there is more to do. Cheap when the snapshot has not moved since.
   */
  refresh(stream: SnapshotStream, limit: number): Promise<boolean>;
  /**
   * People whose name, e-mail or login contains `text` (`text` folded as foldText folds: no case, no
   * diacritics), or whose key or user id is `id`; at most `limit`, in stream and key order.
   */
  search(query: { text?: string; id?: number }, limit: number): Promise<Person[]>;
  get(refs: readonly { stream: SnapshotStream; key: number }[]): Promise<Person[]>;
}
