import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FIRST_RETRY_MS, MAX_RETRY_MS, RETRY_WINDOW_MS, deliverySchedule, nextRetryDelay } from './backoff.js';

describe('deliverySchedule', () => {
  it('starts at 30 s, doubles to 6 h and fits in 3 days', () => {
    const schedule = deliverySchedule();
    expect(schedule.slice(0, 4)).toEqual([30_000, 60_000, 120_000, 240_000]);
    expect(Math.max(...schedule)).toBe(MAX_RETRY_MS);
    const total = schedule.reduce((sum, delay) => sum + delay, 0);
    expect(total).toBeLessThanOrEqual(RETRY_WINDOW_MS);
    // One more 6 h wait would overrun the window: the schedule uses the window up.
    expect(total + MAX_RETRY_MS).toBeGreaterThan(RETRY_WINDOW_MS);
    expect(schedule).toHaveLength(20);
  });

  it('is non-decreasing and scales linearly', () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-6, max: 10, noNaN: true }), (scale) => {
        const scaled = deliverySchedule(scale);
        const real = deliverySchedule();
        expect(scaled).toHaveLength(real.length);
        scaled.forEach((delay, index) => {
          expect(delay).toBeCloseTo((real[index] as number) * scale, 6);
          if (index > 0) expect(delay).toBeGreaterThanOrEqual(scaled[index - 1] as number);
        });
      }),
    );
  });

  it.each([
    [1, FIRST_RETRY_MS],
    [2, FIRST_RETRY_MS * 2],
    [20, MAX_RETRY_MS],
    [21, undefined],
  ])('after attempt %i waits %s ms', (attempt, expected) => {
    expect(nextRetryDelay(deliverySchedule(), attempt)).toBe(expected);
  });
});
