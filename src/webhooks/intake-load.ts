import type { IntakeBusy } from '../outbox/intake-first.js';

/**
 * Webhooks being answered at once from which the intake counts as saturated: far more than a
 * school's upstream sends in its ordinary course (one event at a time, a few per second), and what a
 * burst or a backlog being caught up brings.
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
