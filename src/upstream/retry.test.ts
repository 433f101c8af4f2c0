import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../errors.js';
import { resolveRetryPolicy, retryDelay, type RetryPolicy } from './retry.js';

const policy: RetryPolicy = { maxAttempts: 5, baseMs: 100, maxMs: 1000, maxElapsedMs: 5000 };
const retryable = (retryAfterMs?: number) =>
  new BridgeError('upstream.http', 'HTTP 503', { status: 503, retryable: true, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
const final = new BridgeError('upstream.http', 'HTTP 400', { status: 400 });

describe('retryDelay', () => {
  it.each([
    ['first failure, no jitter', { attempts: 1, error: retryable(), elapsedMs: 0, random: 0 }, 100],
    ['first failure, full jitter', { attempts: 1, error: retryable(), elapsedMs: 0, random: 0.999 }, 50],
    ['third failure', { attempts: 3, error: retryable(), elapsedMs: 0, random: 0 }, 400],
    ['fourth failure', { attempts: 4, error: retryable(), elapsedMs: 0, random: 0 }, 800],
    ['Retry-After wins', { attempts: 1, error: retryable(1000), elapsedMs: 0, random: 0 }, 1000],
    ['Retry-After of zero: the back-off, not at once', { attempts: 1, error: retryable(0), elapsedMs: 0, random: 0.5 }, 75],
    ['Retry-After beyond maxMs: give up', { attempts: 1, error: retryable(1001), elapsedMs: 0, random: 0 }, undefined],
    ['not retryable', { attempts: 1, error: final, elapsedMs: 0, random: 0 }, undefined],
    ['attempts used up', { attempts: 5, error: retryable(), elapsedMs: 0, random: 0 }, undefined],
    ['budget used up', { attempts: 1, error: retryable(), elapsedMs: 4990, random: 0 }, undefined],
  ])('%s', (_name, input, expected) => {
    expect(retryDelay(policy, input)).toBe(expected);
  });

  it('stays within [0, maxMs], the attempt and the time budget', () => {
    fc.assert(
      fc.property(
        fc.record({
          maxAttempts: fc.integer({ min: 1, max: 10 }),
          baseMs: fc.integer({ min: 0, max: 10_000 }),
          maxMs: fc.integer({ min: 0, max: 60_000 }),
          maxElapsedMs: fc.integer({ min: 0, max: 600_000 }),
        }),
        fc.integer({ min: 1, max: 12 }),
        fc.option(fc.integer({ min: 0, max: 120_000 }), { nil: undefined }),
        fc.integer({ min: 0, max: 600_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (p, attempts, retryAfterMs, elapsedMs, random) => {
          const delay = retryDelay(p, { attempts, error: retryable(retryAfterMs), elapsedMs, random });
          if (delay === undefined) return;
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThanOrEqual(p.maxMs);
          expect(attempts).toBeLessThan(p.maxAttempts);
          expect(elapsedMs + delay).toBeLessThanOrEqual(p.maxElapsedMs);
          if (retryAfterMs !== undefined && retryAfterMs > 0) expect(delay).toBe(retryAfterMs);
          if (retryAfterMs === 0 && p.baseMs > 0) expect(delay).toBeGreaterThan(0);
        },
      ),
    );
  });

  it('resolves defaults and clamps nonsense', () => {
    expect(resolveRetryPolicy()).toEqual({ maxAttempts: 5, baseMs: 250, maxMs: 30_000, maxElapsedMs: 120_000 });
    expect(resolveRetryPolicy({ maxAttempts: 0, baseMs: -1 })).toMatchObject({ maxAttempts: 1, baseMs: 0 });
  });
});
