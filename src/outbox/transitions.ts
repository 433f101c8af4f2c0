import type { DeliveryOutcome } from '../connectors/types.js';
import { BridgeError, describeError } from '../errors.js';
import type { Delivery, Settlement } from '../store/index.js';
import { nextAttempt, type RetryPolicy } from './retry-policy.js';
import { waitText } from '../wait-text.js';

/**
 * What becomes of a claimed delivery, as pure functions: done, pending again at a later
 * time (retry), or dead. The store records it (Settlement) only while the claim still holds.
 */
export type Settled =
  | { kind: 'done'; delivery: Delivery; settlement: Settlement }
  | { kind: 'retry' | 'dead'; delivery: Delivery; settlement: Settlement; error: BridgeError };

export interface SettleContext {
  now: number;
  policy: RetryPolicy;
  random: number;
  /** The daemon is stopping: an interrupted attempt does not count, and it is due again at once. */
  stopping: boolean;
  /** How long the connector's call took (kept with the attempt). */
  durationMs?: number;
}

/** The outcome of a claimed delivery (its attempt already counted by the claim) given the connector's answer. */
export function settle(claimed: Delivery, outcome: DeliveryOutcome, ctx: SettleContext): Settled {
  const base = recorded(claimed, ctx.now);
  const httpStatus = outcome.status === 'done' ? outcome.httpStatus : outcome.error.status;
  if (outcome.status === 'done') return { kind: 'done', delivery: base, settlement: settlementOf(claimed, ctx, httpStatus) };
  const error = outcome.error;
  const lastError = describeError(error);
  const pending = (runAt: number, attempts: number): Settled => ({
    kind: 'retry', error,
    delivery: { ...base, status: 'pending', runAt, attempts, lastError },
    settlement: settlementOf(claimed, ctx, httpStatus, { status: 'pending', runAt, attempts, lastError }),
  });
  if (outcome.status === 'retry' && ctx.stopping) return pending(ctx.now, Math.max(0, claimed.attempts - 1));
  const next = nextAttempt(
    {
      attempts: claimed.attempts,
      enqueuedAt: claimed.enqueuedAt,
      now: ctx.now,
      permanent: outcome.status === 'dead',
      retryAfterMs: outcome.status === 'retry' ? (outcome.retryAfterMs ?? error.retryAfterMs) : undefined,
    },
    ctx.policy,
    ctx.random,
  );
  if (next.status === 'pending') return pending(next.runAt, claimed.attempts);
  const why = next.reason === 'rejected' ? lastError : `${expiredText(claimed.attempts, next)}; last error: ${lastError}`;
  return {
    kind: 'dead', error,
    delivery: { ...base, status: 'dead', runAt: ctx.now, lastError: why },
    settlement: settlementOf(claimed, ctx, httpStatus, { status: 'dead', runAt: ctx.now, attempts: claimed.attempts, lastError: why }),
  };
}

/** Why a delivery died unrejected (public-error.ts reads its start back): out of its window, or asked to wait past it. */
function expiredText(attempts: number, next: { reason: 'expired' } | { reason: 'waits_past_window'; retryAfterMs: number }): string {
  const expired = `expired after ${attempts} ${attempts === 1 ? 'attempt' : 'attempts'}`;
  return next.reason === 'expired' ? expired : `${expired} (the receiver asks to wait ${waitText(next.retryAfterMs)}, past delivery.maxAgeHours)`;
}

/**
 * What the store records of an attempt: done, or (`later`) pending again or dead. Written out field
 * by field rather than spread, as `recorded` is.
 */
function settlementOf(
  claimed: Delivery,
  ctx: SettleContext,
  httpStatus: number | undefined,
  later?: { status: 'pending' | 'dead'; runAt: number; attempts: number; lastError: string },
): Settlement {
  const settlement: Settlement = later === undefined
    ? { id: claimed.id, fence: claimed.fence, status: 'done', at: ctx.now, connector: claimed.connector }
    : { id: claimed.id, fence: claimed.fence, status: later.status, at: ctx.now, runAt: later.runAt, attempts: later.attempts, lastError: later.lastError, connector: claimed.connector };
  if (claimed.range !== undefined) settlement.range = claimed.range;
  if (claimed.log !== undefined) settlement.log = claimed.log;
  if (ctx.durationMs !== undefined) settlement.durationMs = ctx.durationMs;
  if (httpStatus !== undefined) settlement.httpStatus = httpStatus;
  return settlement;
}

/**
 * The claimed delivery as recorded after its attempt: no lease, the attempt's time. Written out
 * field by field rather than spread: a batch of hundreds goes through here at once.
 */
function recorded(claimed: Delivery, now: number): Delivery {
  const delivery: Delivery = {
    id: claimed.id, connector: claimed.connector, recordId: claimed.recordId, stream: claimed.stream, orderKey: claimed.orderKey,
    seq: claimed.seq, status: claimed.status, enqueuedAt: claimed.enqueuedAt, runAt: claimed.runAt, attempts: claimed.attempts,
    fence: claimed.fence, lastAttemptAt: now,
  };
  if (claimed.lastError !== undefined) delivery.lastError = claimed.lastError;
  if (claimed.range !== undefined) delivery.range = claimed.range;
  if (claimed.log !== undefined) delivery.log = claimed.log;
  return delivery;
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
