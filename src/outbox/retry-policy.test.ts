import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { backoffDelay, JITTER, nextAttempt, type RetryPolicy } from './retry-policy.js';

const HOUR = 3_600_000;
const policy: RetryPolicy = { baseMs: 1000, maxMs: HOUR, maxAgeMs: 72 * HOUR };

const policies = fc
  .record({ baseMs: fc.integer({ min: 1, max: 60_000 }), maxMs: fc.integer({ min: 1, max: 6 * HOUR }), maxAgeMs: fc.integer({ min: 1, max: 200 * HOUR }) })
  .filter((p) => p.maxMs >= p.baseMs);
const unit = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

describe('backoffDelay', () => {
  it.each([
    [1, 0, 1000],
    [1, 0.999999, 750],
    [2, 0, 2000],
    [3, 0, 4000],
    [12, 0, 2_048_000],
    [13, 0, HOUR],
    [500, 0, HOUR],
    [5000, 0.5, Math.round(HOUR * (1 - JITTER / 2))],
  ])('after %i failures with random %f → %i ms', (attempts, random, expected) => {
    expect(backoffDelay(attempts, policy, random)).toBe(expected);
  });

  it('grows: every possible next delay is at least every possible previous one, until the cap', () => {
    fc.assert(
      fc.property(policies, fc.integer({ min: 1, max: 80 }), unit, unit, (p, attempts, r1, r2) => {
        const before = backoffDelay(attempts, p, r1);
        const after = backoffDelay(attempts + 1, p, r2);
        if (p.baseMs * 2 ** attempts <= p.maxMs) expect(after).toBeGreaterThanOrEqual(before);
        // With the same draw it never shrinks, cap or not.
        expect(backoffDelay(attempts + 1, p, r1)).toBeGreaterThanOrEqual(before);
      }),
    );
  });

  it('never exceeds the cap and keeps at least 75% of it', () => {
    fc.assert(
      fc.property(policies, fc.integer({ min: 1, max: 2000 }), unit, (p, attempts, r) => {
        const delay = backoffDelay(attempts, p, r);
        expect(delay).toBeLessThanOrEqual(p.maxMs);
        expect(delay).toBeGreaterThanOrEqual(Math.floor(Math.min(p.maxMs, p.baseMs * 2 ** Math.min(attempts - 1, 60)) * (1 - JITTER)));
      }),
    );
  });
});

describe('nextAttempt', () => {
  const t0 = 1_700_000_000_000;
  it.each([
    ['a 4xx', { attempts: 1, enqueuedAt: t0, now: t0, permanent: true }, { status: 'dead', reason: 'rejected' }],
    ['the first failure', { attempts: 1, enqueuedAt: t0, now: t0 }, { status: 'pending', runAt: t0 + 1000, delayMs: 1000 }],
    ['Retry-After above the back-off', { attempts: 1, enqueuedAt: t0, now: t0, retryAfterMs: 30_000 }, { status: 'pending', runAt: t0 + 30_000, delayMs: 30_000 }],
    ['Retry-After above the cap', { attempts: 20, enqueuedAt: t0, now: t0, retryAfterMs: 2 * HOUR }, { status: 'pending', runAt: t0 + 2 * HOUR, delayMs: 2 * HOUR }],
    ['Retry-After beyond the deadline', { attempts: 3, enqueuedAt: t0, now: t0 + 71 * HOUR, retryAfterMs: 2 * HOUR }, { status: 'dead', reason: 'waits_past_window', retryAfterMs: 2 * HOUR }],
    ['near the deadline: the last try at the deadline', { attempts: 80, enqueuedAt: t0, now: t0 + 72 * HOUR - 10_000 }, { status: 'pending', runAt: t0 + 72 * HOUR, delayMs: 10_000 }],
    ['at the deadline', { attempts: 80, enqueuedAt: t0, now: t0 + 72 * HOUR }, { status: 'dead', reason: 'expired' }],
  ])('%s', (_name, failure, expected) => {
    expect(nextAttempt(failure, policy, 0)).toEqual(expected);
  });

  it('respects Retry-After, never schedules past the deadline, and is capped otherwise', () => {
    fc.assert(
      fc.property(policies, fc.integer({ min: 1, max: 100 }), fc.nat(), fc.option(fc.nat({ max: 10 * HOUR }), { nil: undefined }), unit, (p, attempts, elapsed, retryAfterMs, r) => {
        const now = t0 + elapsed;
        const next = nextAttempt({ attempts, enqueuedAt: t0, now, retryAfterMs }, p, r);
        if (next.status === 'dead') {
          // Out of the window, or asked to wait past it.
          if (next.reason === 'expired') expect(now).toBeGreaterThanOrEqual(t0 + p.maxAgeMs);
          else expect(next).toEqual({ status: 'dead', reason: 'waits_past_window', retryAfterMs });
          expect(now >= t0 + p.maxAgeMs || now + (retryAfterMs ?? 0) > t0 + p.maxAgeMs).toBe(true);
          return;
        }
        expect(next.runAt).toBeGreaterThanOrEqual(now + (retryAfterMs ?? 0));
        expect(next.runAt).toBeLessThanOrEqual(t0 + p.maxAgeMs);
        expect(next.delayMs).toBeLessThanOrEqual(Math.max(p.maxMs, retryAfterMs ?? 0));
      }),
    );
  });

  it('a delivery that always fails ends dead at maxAge, having been tried at its deadline', () => {
    fc.assert(
      fc.property(policies.filter((p) => p.maxAgeMs / p.baseMs < 1e5), fc.array(unit, { minLength: 1, maxLength: 20 }), (p, draws) => {
        let now = t0;
        let lastTry = now;
        for (let attempts = 1; ; attempts++) {
          const next = nextAttempt({ attempts, enqueuedAt: t0, now }, p, draws[attempts % draws.length]!);
          if (next.status === 'dead') {
            expect(next.reason).toBe('expired');
            expect(now).toBeGreaterThanOrEqual(t0 + p.maxAgeMs);
            expect(lastTry).toBe(t0 + p.maxAgeMs);
            return;
          }
          expect(next.runAt).toBeGreaterThan(now);
          now = lastTry = next.runAt;
        }
      }),
    );
  });
});
