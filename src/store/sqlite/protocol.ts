import type { OperationName, Self } from './operations.js';

/** Messages between the store (sqlite-store.ts) and its database thread (db-thread.ts). */
export interface Call {
  id: number;
  op: OperationName;
  args: unknown[];
}

/** Calls made in one turn of the daemon's event loop travel together: one message, not one each. */
export type ToThread =
  | { t: 'open'; file: string; self: Self; restartFrames?: number | undefined }
  | { t: 'calls'; calls: Call[] }
  | { t: 'close' };

export interface WireError {
  /** SQLite's extended code (`SQLITE_FULL`, `SQLITE_IOERR_WRITE`, …) or `ERROR`. */
  code: string;
  message: string;
}

export interface Result {
  id: number;
  value?: unknown;
  error?: WireError;
}

/**
 * The results of one transaction travel together, with how long it ran and how long the WAL syncs
 * that ended since the last results took (milliseconds; timings.ts).
 */
export type FromThread =
  | { t: 'opened' }
  | { t: 'open-failed'; error: WireError }
  | { t: 'results'; results: Result[]; wrote?: boolean; transactionMs?: number; syncMs?: number[] }
  | { t: 'closed' };
