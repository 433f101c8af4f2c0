import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoff, type Backoff } from './backoff.js';

const curves = fc
  .record({ baseMs: fc.integer({ min: 0, max: 60_000 }), maxMs: fc.integer({ min: 0, max: 6 * 3_600_000 }), jitter: fc.double({ min: 0, max: 0.5, noNaN: true }) })
  .filter((c) => c.maxMs >= c.baseMs);
const unit = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });

describe('backoff', () => {
  const curve: Backoff = { baseMs: 100, maxMs: 1000, jitter: 0.5 };

  it.each([
    [1, 0, 100],
    [1, 0.999999, 50],
    [2, 0, 200],
    [4, 0, 800],
    [5, 0, 1000],
    [5000, 0.5, 750],
    [0, 0, 100],
    [1, Number.NaN, 100],
  ])('after %i failures with random %f → %i ms', (attempts, random, expected) => {
    expect(backoff(attempts, curve, random)).toBe(expected);
  });

  it('stays between the capped step less its jitter and the capped step', () => {
    fc.assert(
      fc.property(curves, fc.integer({ min: 1, max: 2000 }), unit, (c, attempts, r) => {
        const step = Math.min(c.maxMs, c.baseMs * 2 ** Math.min(attempts - 1, 60));
        const delay = backoff(attempts, c, r);
        expect(delay).toBeLessThanOrEqual(Math.round(step));
        expect(delay).toBeGreaterThanOrEqual(Math.floor(step * (1 - c.jitter)));
      }),
    );
  });

  it('grows: below the cap every possible next delay is at least every possible previous one', () => {
    fc.assert(
      fc.property(curves, fc.integer({ min: 1, max: 80 }), unit, unit, (c, attempts, r1, r2) => {
        const before = backoff(attempts, c, r1);
        if (c.baseMs * 2 ** attempts <= c.maxMs) expect(backoff(attempts + 1, c, r2)).toBeGreaterThanOrEqual(before);
        expect(backoff(attempts + 1, c, r1)).toBeGreaterThanOrEqual(before);
      }),
    );
  });
});
