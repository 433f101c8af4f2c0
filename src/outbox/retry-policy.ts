import { backoff } from '../backoff.js';

/**
 * When a failed delivery is tried again, decided in one pure function. The schedule (a table in
 * README.md) is the back-off curve from `baseMs`, capped at `maxMs`, with up to 25% of jitter taken
 * off so a crowd of failures spreads out.
 *
 * A server's `Retry-After` is honoured even above the cap (coming back earlier would only earn another
 * 429). Nothing is scheduled past `enqueuedAt + maxAgeMs`: the last attempt happens at that deadline at
 * the latest, and a failure at or after it makes the delivery dead.
 */
export interface RetryPolicy {
  baseMs: number;
  maxMs: number;
  /** delivery.maxAgeHours in ms: the window, from the (re)enqueue, in which retries happen. */
  maxAgeMs: number;
}

export const JITTER = 0.25;

export type NextAttempt =
  | { status: 'pending'; runAt: number; delayMs: number }
  | { status: 'dead'; reason: 'rejected' }
  | { status: 'dead'; reason: 'expired' }
  /** The target asks to wait past the retry window: no attempt could be made in it. */
  | { status: 'dead'; reason: 'waits_past_window'; retryAfterMs: number };

export interface FailedAttempt {
  /** Attempts made so far, this failure included (≥ 1). */
  attempts: number;
  /** Start of the retry window: when the entry was enqueued, or retried by hand. */
  enqueuedAt: number;
  now: number;
  /** The target said "not again before" this many ms (Retry-After). */
  retryAfterMs?: number;
  /** The target said retrying cannot help (a 4xx other than 408/429). */
  permanent?: boolean;
}

/** The back-off delay after `attempts` failures, before Retry-After and the deadline. `random` in [0, 1). */
export function backoffDelay(attempts: number, policy: Pick<RetryPolicy, 'baseMs' | 'maxMs'>, random: number): number {
  return backoff(attempts, { baseMs: policy.baseMs, maxMs: policy.maxMs, jitter: JITTER }, random);
}

export function nextAttempt(failure: FailedAttempt, policy: RetryPolicy, random: number): NextAttempt {
  if (failure.permanent) return { status: 'dead', reason: 'rejected' };
  const deadline = failure.enqueuedAt + policy.maxAgeMs;
  if (failure.now >= deadline) return { status: 'dead', reason: 'expired' };
  const retryAfterMs = Math.max(0, failure.retryAfterMs ?? 0);
  // The server will not take it before the deadline: waiting would only end in "expired" anyway.
  if (failure.now + retryAfterMs > deadline) return { status: 'dead', reason: 'waits_past_window', retryAfterMs };
  const delay = Math.max(backoffDelay(failure.attempts, policy, random), retryAfterMs);
  const runAt = Math.min(failure.now + delay, deadline);
  return { status: 'pending', runAt, delayMs: runAt - failure.now };
}
