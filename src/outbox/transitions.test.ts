import { describe, expect, it } from 'vitest';
import { BridgeError } from '../errors.js';
import type { Delivery } from '../store/index.js';
import { checkOutcomes, failAll, settle } from './transitions.js';
import { publicError } from './public-error.js';

const HOUR = 3_600_000;
const policy = { baseMs: 1000, maxMs: HOUR, maxAgeMs: 72 * HOUR };
const t0 = 1_000_000;
/** As a claim leaves it: active, its attempt counted, leased. */
const claimed: Delivery = {
  id: 'a:r1', connector: 'a', recordId: 'r1', stream: 'students', orderKey: 'students:1', seq: 1,
  status: 'active', enqueuedAt: t0, runAt: t0, attempts: 1, fence: 3, leaseUntil: t0 + 60_000, leaseOwner: 'me',
};
const ctx = { now: t0 + 10, policy, random: 0, stopping: false };
const transient = new BridgeError('x.unavailable', '503', { retryable: true, status: 503 });
const permanent = new BridgeError('x.rejected', '400', { status: 400 });

describe('delivery transitions', () => {
  it.each([
    ['done', { status: 'done' } as const, { kind: 'done', settlement: { status: 'done', fence: 3 } }],
    ['retry', { status: 'retry', error: transient } as const, { kind: 'retry', delivery: { status: 'pending', runAt: t0 + 10 + 1000, lastError: 'x.unavailable: 503' } }],
    ['retry with Retry-After', { status: 'retry', error: transient, retryAfterMs: 5000 } as const, { kind: 'retry', settlement: { runAt: t0 + 10 + 5000, attempts: 1 } }],
    ['dead', { status: 'dead', error: permanent } as const, { kind: 'dead', delivery: { status: 'dead', lastError: 'x.rejected: 400', attempts: 1 } }],
  ])('settle %s', (_name, outcome, expected) => {
    const result = settle(claimed, outcome, ctx);
    expect(result).toMatchObject(expected);
    expect(result.delivery.leaseUntil).toBeUndefined();
    expect(result.delivery.lastAttemptAt).toBe(t0 + 10);
    expect(result.settlement).toMatchObject({ id: 'a:r1', fence: 3, at: t0 + 10 });
  });

  it('keeps the call\'s duration and the receiver\'s status with the settlement, for the attempt history', () => {
    expect(settle(claimed, { status: 'done', httpStatus: 201 }, { ...ctx, durationMs: 42 }).settlement).toMatchObject({ durationMs: 42, httpStatus: 201 });
    expect(settle(claimed, { status: 'dead', error: permanent }, { ...ctx, durationMs: 7 }).settlement).toMatchObject({ durationMs: 7, httpStatus: 400 });
    expect(settle(claimed, { status: 'done' }, ctx).settlement).not.toHaveProperty('httpStatus');
  });

  it('a retry interrupted by stop is due at once and not counted', () => {
    expect(settle(claimed, { status: 'retry', error: transient }, { ...ctx, stopping: true }).settlement).toMatchObject({ status: 'pending', attempts: 0, runAt: t0 + 10 });
  });

  it('a failure past the retry window is dead, saying why', () => {
    const result = settle(claimed, { status: 'retry', error: transient }, { ...ctx, now: t0 + 72 * HOUR });
    expect(result).toMatchObject({ kind: 'dead', settlement: { lastError: 'expired after 1 attempt; last error: x.unavailable: 503' } });
    // Asked to wait past the window: said so, not as if the window had run out.
    const waits = settle(claimed, { status: 'retry', error: transient, retryAfterMs: 300_000 * 1000 }, { ...ctx, now: t0 + HOUR });
    expect(waits).toMatchObject({ kind: 'dead', settlement: { lastError: 'expired after 1 attempt (the receiver asks to wait 3 days, past delivery.maxAgeHours); last error: x.unavailable: 503' } });
    expect(publicError(waits.delivery.lastError ?? '')).toBe('x.unavailable; expired after 1 attempt');
  });

  it('checks the connector kept its contract', () => {
    const ok = [{ status: 'done' as const }];
    expect(checkOutcomes(ok, 1)).toBe(ok);
    for (const bad of [[], [{ status: 'done' }, { status: 'done' }], [{ status: 'retry' }], [{ status: 'weird' }], undefined, 'x']) {
      expect(checkOutcomes(bad, 1)).toMatchObject([{ status: 'retry', error: { code: 'outbox.bad_outcomes' } }]);
    }
    expect(failAll(new Error('boom'), 2)).toMatchObject([{ status: 'retry', error: { code: 'outbox.deliver_failed' } }, { status: 'retry' }]);
    expect(failAll(permanent, 1)[0]).toMatchObject({ status: 'retry', error: permanent });
  });
});
