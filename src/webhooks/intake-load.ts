import type { IntakeBusy } from '../outbox/intake-first.js';

/**
 * Webhooks being answered at once from which the intake counts as saturated. Each is answered within
 * milliseconds, so the few per second of a school's ordinary day seldom overlap at all; 8 at once
 * is a burst, or the upstream retrying a backlog after an outage (API v2 retries for up to 3 days,
 * its concurrency not shown).
 */
export const SATURATED = 8;

/** How many webhooks the intake is answering, for the outbox to hold its batches while many are (outbox/intake-first.ts). */
export interface IntakeLoad extends IntakeBusy {
  /** A webhook's handling began; `leave()` must follow once it is answered. */
  enter(): void;
  leave(): void;
  inFlight(): number;
}

export function createIntakeLoad(now: () => number = () => performance.now()): IntakeLoad {
  let inFlight = 0;
  let saturatedAt = -Infinity;
  return {
    enter() {
      inFlight += 1;
      if (inFlight >= SATURATED) saturatedAt = now();
    },
    leave() {
      inFlight = Math.max(0, inFlight - 1);
    },
    inFlight: () => inFlight,
    saturatedAt: () => saturatedAt,
    now,
  };
}
