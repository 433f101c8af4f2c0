import type { AnyRecord } from '../records.js';
import type { Op } from '../store/index.js';
import type { UpstreamClient } from '../upstream/index.js';

/**
 * What the poller needs from its neighbours, and nothing more, so it can be tested against an
 * in-memory twin and does not depend on how the outbox is built.
 */
export interface OutboxPort {
  /** Store ops that enqueue the records for every subscribed connector (known ids are skipped). */
  enqueueOps(records: readonly AnyRecord[]): Op[];
  /** Wakes the delivery workers after a commit. */
  notify(): void;
  /** Holds back deliveries while a cycle commits; call the returned function to let them go (Outbox.holdDeliveries). */
  holdDeliveries(): () => void;
  /** Deliveries queued, all connectors (the backlog paces itself on it). */
  depth(): number;
  /** Called as deliveries leave the queue (delivered or dead); returns the unsubscribe function. */
  on(event: 'delivered' | 'dead', listener: () => void): () => void;
}

/** The full lists, their bodies read by the list worker (the cycle). */
export type ListSource = Pick<UpstreamClient, 'fetchList'>;
