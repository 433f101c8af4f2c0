import type { DeliveryOutcome } from '../connectors/types.js';
import { BridgeError, describeError } from '../errors.js';
import type { OutboxEntry } from './entry.js';
import { nextAttempt, type RetryPolicy } from './retry-policy.js';

/**
 * The life of an entry as pure functions (STYLE 5): pending → active (leased) → gone (done), back to
 * pending (retry) or dead. The outbox shell turns their results into store ops.
 */

/** Taken by a worker: an attempt begins, and the lease says until when it belongs to it. */
export function lease(entry: OutboxEntry, now: number, leaseMs: number): OutboxEntry {
  return { ...entry, status: 'active', attempts: entry.attempts + 1, leaseUntil: now + leaseMs };
}

/** A lease nobody holds any more (a crash, or a delivery that outlived it): pending again, at once. */
export function reclaim(entry: OutboxEntry, now: number): OutboxEntry {
  const { leaseUntil: _lease, ...rest } = entry;
  return { ...rest, status: 'pending', runAt: Math.min(entry.runAt, now) };
}

/** A retry by hand: a fresh start with a new retry window. */
export function retryByHand(entry: OutboxEntry, now: number): OutboxEntry {
  const { leaseUntil: _lease, ...rest } = entry;
  return { ...rest, status: 'pending', attempts: 0, enqueuedAt: now, runAt: now };
}

export type Settled =
  | { kind: 'done'; entry: OutboxEntry }
  | { kind: 'retry'; entry: OutboxEntry; error: BridgeError }
  | { kind: 'dead'; entry: OutboxEntry; error: BridgeError };

export interface SettleContext {
  now: number;
  policy: RetryPolicy;
  random: number;
  /** The daemon is stopping: an interrupted attempt does not count, and it is due again at once. */
  stopping: boolean;
}

/** What becomes of a leased entry given the connector's outcome for its record. */
export function settle(active: OutboxEntry, outcome: DeliveryOutcome, ctx: SettleContext): Settled {
  const { leaseUntil: _lease, ...entry } = active;
  const base = { ...entry, lastAttemptAt: ctx.now };
  if (outcome.status === 'done') return { kind: 'done', entry: base };
  const error = outcome.error;
  const lastError = describeError(error);
  if (outcome.status === 'retry' && ctx.stopping) {
    return { kind: 'retry', entry: { ...base, status: 'pending', attempts: Math.max(0, entry.attempts - 1), runAt: ctx.now, lastError }, error };
  }
  const next = nextAttempt(
    {
      attempts: entry.attempts,
      enqueuedAt: entry.enqueuedAt,
      now: ctx.now,
      permanent: outcome.status === 'dead',
      retryAfterMs: outcome.status === 'retry' ? (outcome.retryAfterMs ?? error.retryAfterMs) : undefined,
    },
    ctx.policy,
    ctx.random,
  );
  if (next.status === 'pending') return { kind: 'retry', entry: { ...base, status: 'pending', runAt: next.runAt, lastError }, error };
  const why = next.reason === 'expired' ? `expired after ${entry.attempts} attempts; last error: ${lastError}` : lastError;
  return { kind: 'dead', entry: { ...base, status: 'dead', runAt: ctx.now, lastError: why }, error };
}

/**
 * A connector's answer checked against its contract: one outcome per record. A wrong answer is a bug
 * in the connector; it is treated as a retry of every record, so nothing is lost or marked done.
 */
export function checkOutcomes(outcomes: unknown, count: number): DeliveryOutcome[] {
  const valid =
    Array.isArray(outcomes) &&
    outcomes.length === count &&
    outcomes.every((o) => o && (o.status === 'done' || ((o.status === 'retry' || o.status === 'dead') && o.error instanceof Error)));
  if (valid) return outcomes as DeliveryOutcome[];
  const error = new BridgeError('outbox.bad_outcomes', `the connector returned ${Array.isArray(outcomes) ? outcomes.length : typeof outcomes} outcomes for ${count} records`, { retryable: true });
  return Array.from({ length: count }, () => ({ status: 'retry' as const, error }));
}

/** A thrown `deliver` (or a lease that ran out) is a retry of every record of the batch. */
export function failAll(error: unknown, count: number, code = 'outbox.deliver_failed'): DeliveryOutcome[] {
  const bridgeError =
    error instanceof BridgeError ? error : new BridgeError(code, describeError(error), { retryable: true, cause: error });
  return Array.from({ length: count }, () => ({ status: 'retry' as const, error: bridgeError }));
}
