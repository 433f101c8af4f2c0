import type { AnyRecord, Stream } from '../records.js';
import type { StatePatch } from '../store/index.js';
import type { UpstreamClient } from '../upstream/index.js';

/**
 * What the poller needs from the outbox, and nothing more, so it can be tested against a twin and
 * does not depend on how the outbox is built.
 */
export interface OutboxPort {
  /** Connectors subscribed to a stream: the store enqueues a cycle's changes for them. */
  subscribers(stream: Stream): string[];
  /** Enqueues records with state in one transaction (the roster export). */
  enqueue(records: readonly AnyRecord[], state?: StatePatch): Promise<number>;
  /** Wakes the delivery workers after a commit. */
  notify(): void;
  /** Holds back deliveries while a cycle commits; call the returned function to let them go. */
  holdDeliveries(): () => void;
}

/** The full lists, their bodies read by the list worker (the cycle). */
export type ListSource = Pick<UpstreamClient, 'fetchList'>;
