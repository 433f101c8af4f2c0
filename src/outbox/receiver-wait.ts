import type { DeliveryOutcome } from '../connectors/types.js';

/**
 * What a connector's receiver asked of the deliveries to it. A `Retry-After` (a 429, a 503) is an
 * answer about the receiver, not about one record: until then no delivery to it starts (others
 * would only meet the same answer and spend an attempt), and then one batch goes first, alone,
 * before the rest follow (the deliveries the answer sent back all fall due at that moment, and
 * `concurrency` of them at once would meet it again). Pure; the worker keeps one per connector.
 */
export interface ReceiverWait {
  /** No delivery starts before this (epoch ms). */
  until: number;
  /** Since when: a batch started before this says nothing of the receiver after it. */
  since: number;
  /** One batch at a time, until one started after `since` gets through. */
  probing: boolean;
}

/** The longest a receiver's answer holds its connector: a longer wait goes to each delivery alone (its back-off, its age limit). */
export const MAX_RECEIVER_WAIT_MS = 60 * 60_000;

export const NO_WAIT: ReceiverWait = { until: 0, since: 0, probing: false };

/** The wait after a batch that started at `startedAt` ended at `now` with `outcomes`. */
export function afterBatch(wait: ReceiverWait, outcomes: readonly DeliveryOutcome[], startedAt: number, now: number): ReceiverWait {
  let asked = 0;
  let through = false;
  for (const outcome of outcomes) {
    if (outcome.status === 'done') through = true;
    else if (outcome.status === 'retry') asked = Math.max(asked, outcome.retryAfterMs ?? outcome.error.retryAfterMs ?? 0);
  }
  if (asked > 0) return { until: Math.max(wait.until, now + Math.min(asked, MAX_RECEIVER_WAIT_MS)), since: now, probing: true };
  if (through && wait.probing && startedAt >= wait.since) return { ...wait, probing: false };
  return wait;
}
