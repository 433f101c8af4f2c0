import type { Stream } from '../records.js';
import type { Key, SnapshotStream } from './port-snapshot.js';
import type { StatePatch } from './port-state.js';

/** One record to deliver to some connectors: its text is what they receive. */
export interface Enqueue {
  /** The record id: the connectors' idempotency key. */
  id: string;
  stream: Stream;
  /** `<stream>:<key>`: deliveries of one connector with the same order key go out in enqueue order. */
  orderKey: string;
  json: string;
  connectors: readonly string[];
}

/**
 * `blocked`: waits behind an older delivery of its connector and order key (shown as pending). A
 * delivery that is done leaves the store.
 */
export type DeliveryStatus = 'pending' | 'active' | 'dead' | 'blocked';

/** One delivery of one record to one connector (`<connector>:<record id>`). Times are epoch ms. */
export interface Delivery {
  id: string;
  connector: string;
  /** The record id (the idempotency key). */
  recordId: string;
  stream: Stream;
  orderKey: string;
  /** Enqueue order, increasing across the store's life. */
  seq: number;
  status: DeliveryStatus;
  /** Start of the retry window: the enqueue, moved on when it becomes its key's head and by a retry by hand. */
  enqueuedAt: number;
  runAt: number;
  attempts: number;
  lastError?: string;
  lastAttemptAt?: number;
  /** An active delivery belongs to `leaseOwner` until then. */
  leaseUntil?: number;
  leaseOwner?: string;
  /** Counts claims: a settle names the fence it claimed with, so a late answer after a new claim is refused. */
  fence: number;
  /** A created change delivered straight from a fresh snapshot (CreatedRange), not a row of its own. */
  range?: RangeItem;
  /** A webhook's record delivered straight from the delivery log (PostgreSQL), not a row of its own. */
  log?: LogItem;
}

/** Where a record delivered from the delivery log comes from: its part of the log and its place in it. */
export interface LogItem {
  part: number;
  seq: number;
}

/** Where a created change delivered from a fresh snapshot's range comes from. */
export interface RangeItem {
  stream: SnapshotStream;
  /** Which of the stream's ranges (CreatedRange.part). */
  part: number;
  key: Key;
  chain: string;
}

/**
 * A claimed delivery and its record: the JSON text, or, for a first cycle's `created` change, the
 * parts the outbox builds it from (the snapshot row as it was when the change was detected).
 */
export interface Claimed {
  delivery: Delivery;
  json?: string;
  created?: CreatedParts;
}

export interface CreatedParts {
  stream: SnapshotStream;
  key: Key;
  chain: string;
  detectedAt: string;
  /** The row's JSON: text, or its UTF-8 bytes where the engine reads them cheaper so. */
  text: string | Uint8Array;
}

export type Settlement = (
  | { id: string; fence: number; status: 'done'; at: number }
  | { id: string; fence: number; status: 'pending' | 'dead'; at: number; runAt: number; attempts: number; lastError: string }
) & {
  connector: string;
  range?: RangeItem;
  log?: LogItem;
  /** How long the attempt took, and the receiver's HTTP status if it answered: kept in the attempt's history. */
  durationMs?: number;
  httpStatus?: number;
};

export interface ClaimRequest {
  connector: string;
  limit: number;
  now: number;
  leaseMs: number;
}

export interface DeliveryFilter {
  /** `pending` includes deliveries in flight and those waiting behind another. */
  state?: 'pending' | 'active' | 'dead';
  connector?: string;
  limit?: number;
}

/** A delivery as `deliveries list` shows it: waiting ones name the delivery they wait behind. */
export interface ListedDelivery extends Delivery {
  waitingFor?: string;
}

/** What a retry by hand puts back: one delivery, several, or every dead one (of a connector). */
export type RetryTarget = { id: string } | { ids: readonly string[] };

/** Dead deliveries, of one connector or of all, in enqueue order after `after` (a `seq`; 0 for the first), at most `limit`. */
export interface DeadChunk {
  connector?: string;
  after: number;
  limit: number;
}

export interface DeliveryLookup {
  ids?: readonly string[];
  keys?: readonly { connector: string; orderKey: string }[];
}

/** A connector's deliveries that failed and wait for their next try. */
export interface Retrying {
  connector: string;
  count: number;
  /** The soonest next try. */
  nextRunAt: number;
  lastAttemptAt?: number;
  /** The error of the latest failed attempt. */
  lastError: string;
}

export interface OutboxCounts {
  /** Not done and not dead: pending, in flight, waiting behind another, and owed by a created range. */
  depth: number;
  dead: number;
}

/**
 * The created changes a fresh snapshot owes one connector (a first `emit` cycle): delivered straight
 * from the snapshot's rows in key order, a batch at a time, with no row of their own. A change whose
 * delivery fails alone, or whose key has another delivery queued, becomes a row like any other. A
 * big stream is owed in a few parts of disjoint keys, each a range with its own cursor, so that a
 * connector can have batches of several parts in flight at once.
 */
export interface CreatedRange {
  connector: string;
  stream: SnapshotStream;
  /** 0, 1, …: the parts of a stream's keys, in key order. */
  part: number;
  detectedAt: string;
  /** Created changes not delivered yet: those of the keys after `after` (all, when absent) up to `upto`. */
  remaining: number;
  after?: Key;
  upto: Key;
  runAt: number;
  attempts: number;
  lastError?: string;
}

export interface OutboxStore {
  /** Enqueues records (ids already queued are skipped), with state in the same transaction. */
  enqueue(records: readonly Enqueue[], state?: StatePatch): Promise<number>;
  /** Leases up to `limit` due heads of their order keys to this replica, soonest first. */
  claim(request: ClaimRequest): Promise<Claimed[]>;
  /**
   * Records the outcome of claimed deliveries, each only while this replica still holds it under
   * that fence; resolves with the ids that were settled. A done delivery leaves the store and makes
   * the next one of its order key pending; its record goes with its last delivery.
   */
  settle(settlements: readonly Settlement[]): Promise<string[]>;
  /** Dead (or waiting) deliveries back to pending, due now, with a fresh retry window; the ids retried. */
  retry(target: RetryTarget, now: number): Promise<string[]>;
  /**
   * Dead deliveries back to pending as `retry` puts them, a chunk of them in one transaction: the
   * ids retried, in enqueue order, and the last one's `seq` (the next chunk's `after`).
   */
  retryDead(chunk: DeadChunk, now: number): Promise<{ ids: string[]; last: number | undefined }>;
  get(id: string): Promise<Delivery | undefined>;
  list(filter?: DeliveryFilter): Promise<ListedDelivery[]>;
  /**
   * A chunk of the dead deliveries, as `list` gives them, in enqueue order: the next chunk starts
   * after the last one's `seq`. What reads every dead delivery (to group them by error) reads them so,
   * a bounded call at a time, not in one call that holds SQLite's database thread for seconds.
   */
  listDead(chunk: DeadChunk): Promise<ListedDelivery[]>;
  /** The deliveries with these ids, and those of these connectors' order keys, in enqueue order. */
  lookup(query: DeliveryLookup): Promise<ListedDelivery[]>;
  /** Per connector, the deliveries waiting for another try after a failure (ranges included). */
  retrying(): Promise<Retrying[]>;
  counts(): Promise<Map<string, OutboxCounts>>;
  ranges(): Promise<CreatedRange[]>;
  /** The earliest runAt of a connector's pending deliveries and ranges not in flight (its worker's next wake-up). */
  nextRunAt(connector: string): Promise<number | undefined>;
  /** Leases past their time, or held by replicas that stopped, are pending again (the attempt stays counted). */
  sweep(now: number): Promise<{ reclaimed: number }>;
}
