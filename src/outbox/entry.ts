import type { AnyRecord, Stream } from '../records.js';

/** Store collections of the outbox (CONTRACT §7). */
export const ENTRIES = 'outbox';
/** Record payloads, stored once however many connectors a record goes to; dropped with their last entry. */
export const RECORDS = 'outbox.records';
/** `entry id → deliveredAt` for done deliveries, kept `delivery.maxAgeHours` so a re-enqueue does nothing. */
export const DELIVERED = 'outbox.delivered';

export type EntryStatus = 'pending' | 'active' | 'dead';

/**
 * One delivery of one record to one connector (STYLE 6). Small on purpose: the queue document is
 * rewritten whole at a checkpoint, so the payload lives in RECORDS and done entries leave the queue.
 * Times are epoch milliseconds. Stored values are immutable: every change puts a new object.
 */
export interface OutboxEntry {
  /** `<connector>:<record id>`: deterministic, so enqueuing the same record twice is a no-op. */
  id: string;
  connector: string;
  /** The idempotency key: the record id (`Idempotency-Key` of the webhook connectors). */
  key: string;
  stream: Stream;
  /** `<stream>:<record key>`: entries of one connector with the same order key are applied in `seq` order. */
  order: string;
  /** Detection order, increasing across the store's life (restarts continue above the largest left). */
  seq: number;
  status: EntryStatus;
  /** Start of the retry window (delivery.maxAgeHours); reset by a retry by hand. */
  enqueuedAt: number;
  /** Not to be tried before this. */
  runAt: number;
  attempts: number;
  lastError?: string;
  /** When the last attempt ended (for `deliveries list`). */
  lastAttemptAt?: number;
  /** An `active` entry belongs to a running delivery until then; start-up and the sweep reclaim it. */
  leaseUntil?: number;
}

export const entryId = (connector: string, recordId: string): string => `${connector}:${recordId}`;

/** Records without a key (an event whose object has no id) are ordered on their own. */
export function orderKey(record: AnyRecord): string {
  return record.key === null || record.key === undefined ? `${record.stream}#${record.id}` : `${record.stream}:${String(record.key)}`;
}

export function newEntry(connector: string, record: AnyRecord, seq: number, now: number): OutboxEntry {
  return {
    id: entryId(connector, record.id),
    connector,
    key: record.id,
    stream: record.stream,
    order: orderKey(record),
    seq,
    status: 'pending',
    enqueuedAt: now,
    runAt: now,
    attempts: 0,
  };
}
