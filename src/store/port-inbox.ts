import type { Enqueue } from './port-outbox.js';

/** A stored webhook event; its id (`<event>:<object id>:<hash>`) is the dedupe key. */
export interface InboxEntry {
  id: string;
  event: string;
  /** ISO 8601, UTC. */
  receivedAt: string;
  /** Epoch ms of receipt; what pruning compares. */
  receivedAtMs: number;
  /** The verified body as received (UTF-8). */
  body: string;
  /** Ids of the records emitted, the latest re-emission's included. */
  recordIds: string[];
  /** How many times `events reprocess` re-emitted it. */
  reprocessed: number;
}

/** A correctly signed delivery whose timestamp was outside the tolerance; kept until released. */
export interface QuarantineEntry {
  /** The identity the event would get in the inbox. */
  id: string;
  event: string;
  reason: 'stale' | 'future';
  /** The signed timestamp of the delivery, as the header said. */
  timestamp: number;
  /** ISO 8601, UTC. */
  receivedAt: string;
  body: string;
}

export interface InboxStore {
  /**
   * Stores a new event and enqueues its records in one transaction, and drops a quarantined copy of
   * it. An id already stored writes nothing: `duplicate` (durable, since it was committed before).
   */
  accept(entry: InboxEntry, records: readonly Enqueue[]): Promise<'stored' | 'duplicate'>;
  get(id: string): Promise<InboxEntry | undefined>;
  /** Re-emits a stored event: bumps `reprocessed` from `expected` and enqueues; false when it changed meanwhile. */
  reprocess(id: string, expected: number, recordIds: string[], records: readonly Enqueue[]): Promise<boolean>;
  /** Keeps a stale delivery unless its event is stored or held already; true when it was added. */
  quarantine(entry: QuarantineEntry): Promise<boolean>;
  quarantined(): Promise<QuarantineEntry[]>;
  /**
   * Releases a quarantined delivery: removes it and stores its event as `accept` does. `duplicate`
   * when the event was stored meanwhile (only the quarantine entry goes), `missing` when not held.
   */
  release(id: string, entry: InboxEntry, records: readonly Enqueue[]): Promise<'released' | 'duplicate' | 'missing'>;
  /**
   * Forgets at most `limit` of the events received before `beforeMs`, the oldest first, in one
   * transaction; resolves with how many. Fewer than `limit` says that none of them is left.
   */
  prune(beforeMs: number, limit: number): Promise<number>;
  /**
   * Stored events whose body contains one of `texts` as written or as JSON may escape it
   * (history-rules.ts jsonForms, caseForms: case ignored), newest first, at most `limit`. SQLite
   * reads the inbox a window per call of its database thread (docs/store.md, "Reads that could take long").
   */
  search(texts: readonly string[], limit: number): Promise<InboxEntry[]>;
}
