import { backoff } from '../backoff.js';
import type { BridgeError } from '../errors.js';
import type { RetryOptions } from './types.js';

/**
 * When to try an upstream call again (pure; the client owns the sleeping). Only calls the client
 * marks safe are ever retried (GETs and the idempotent webhook DELETE); this decides *whether and
 * when* after a failed attempt.
 */
export interface RetryPolicy {
  maxAttempts: number;
  baseMs: number;
  maxMs: number;
  maxElapsedMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 5, baseMs: 250, maxMs: 30_000, maxElapsedMs: 120_000 };

export function resolveRetryPolicy(options: RetryOptions = {}): RetryPolicy {
  return {
    maxAttempts: Math.max(1, Math.floor(options.maxAttempts ?? DEFAULT_RETRY_POLICY.maxAttempts)),
    baseMs: Math.max(0, options.baseMs ?? DEFAULT_RETRY_POLICY.baseMs),
    maxMs: Math.max(0, options.maxMs ?? DEFAULT_RETRY_POLICY.maxMs),
    maxElapsedMs: Math.max(0, options.maxElapsedMs ?? DEFAULT_RETRY_POLICY.maxElapsedMs),
  };
}

export interface RetryInput {
  /** Attempts made so far (≥ 1). */
  attempts: number;
  error: BridgeError;
  /** Time since the first attempt started. */
  elapsedMs: number;
  /** A number in [0, 1) for jitter. */
  random: number;
}

/**
 * Milliseconds to wait before the next attempt, or undefined to give up.
 * The back-off curve with up to half of each step taken off at random, so that many clients that
 * failed together do not come back together, yet a retry never fires immediately. A Retry-After
 * from the server (above 0) wins over our own schedule; if it is longer than one step may be (maxMs) or would
 * overrun the total budget, we give up and let the caller decide with `error.retryAfterMs`.
 */
export function retryDelay(policy: RetryPolicy, input: RetryInput): number | undefined {
  if (!input.error.retryable || input.attempts >= policy.maxAttempts) return undefined;
  let delay: number;
  // A Retry-After of 0 (or a date gone by) would send the remaining attempts at once to a server
  // that is refusing load: the back-off curve then, as with none.
  if (input.error.retryAfterMs !== undefined && input.error.retryAfterMs > 0) {
    if (input.error.retryAfterMs > policy.maxMs) return undefined;
    delay = input.error.retryAfterMs;
  } else {
    delay = backoff(input.attempts, { baseMs: policy.baseMs, maxMs: policy.maxMs, jitter: 0.5 }, input.random);
  }
  if (input.elapsedMs + delay > policy.maxElapsedMs) return undefined;
  return delay;
}
