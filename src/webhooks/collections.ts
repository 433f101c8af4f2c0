/**
 * What webhook intake keeps in the store. The inbox doubles as the dedupe index: its key is the
 * event's identity, and an entry is kept `webhooks.dedupeRetentionHours` (longer than the upstream's
 * 3-day retry window), with the raw body so `events reprocess` can re-emit it within that time.
 */
export const INBOX = 'webhooks.inbox';
/** Correctly signed deliveries whose timestamp was outside the tolerance; kept until released. */
export const QUARANTINE = 'webhooks.quarantine';

export interface InboxEntry {
  /** The event identity, `<event>:<object id>:<hash>` (also the store key). */
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

export interface QuarantineEntry {
  /** The identity the event would get in the inbox (also the store key). */
  id: string;
  event: string;
  reason: 'stale' | 'future';
  /** The signed timestamp of the delivery (seconds, as the header said). */
  timestamp: number;
  /** ISO 8601, UTC. */
  receivedAt: string;
  body: string;
}
