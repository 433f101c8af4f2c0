import type { PolledStreamName as PolledStream } from '../../streams/index.js';
import type { PagingSigns } from './paging.js';
import type { Initial, ParseBatch, ParseEnd } from './parse.js';

/** Messages between the list worker (worker-thread.ts) and its main-thread side (worker.ts). */
export type ToWorker =
  /** The stored snapshot's index (keys ascending, their raw hashes: SnapshotIndex) becomes the stream's committed one. */
  | { t: 'index'; stream: PolledStream; keys: Float64Array | string[]; hashes: string }
  | { t: 'begin'; id: number; stream: PolledStream; useIndex: boolean; fresh?: { initial: Initial }; paging?: PagingSigns }
  | { t: 'chunk'; id: number; bytes: Uint8Array }
  | { t: 'end'; id: number; stream: PolledStream }
  | { t: 'abort'; id: number }
  /** A commit of the stream begins: its committed index no longer matches the snapshot. */
  | { t: 'drop'; stream: PolledStream }
  /** Every commit of the cycle succeeded: read `id`'s index becomes the stream's committed one. */
  | { t: 'adopt'; stream: PolledStream; id: number };

export interface WireError {
  code: string;
  message: string;
  retryable: boolean;
  context?: Record<string, unknown>;
}

export type ToMain =
  /** `spent`: the chunk's memory, given back for the next chunk (see worker.ts). */
  | ({ t: 'batch'; id: number; spent?: ArrayBuffer } & ParseBatch)
  | { t: 'done'; id: number; end: ParseEnd }
  | { t: 'error'; id: number; error: WireError };
