import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.js';
import { createLimiter, waitTime } from './limiter.js';

describe('waitTime', () => {
  it.each([
    ['free slots', [1000, 2000], 5000, 3, 0, 0],
    ['window full', [1000, 2000, 3000], 5000, 3, 0, 56_000],
    ['old requests aged out', [1000, 2000, 3000], 62_000, 3, 0, 0],
    ['paused by a 429', [], 5000, 3, 20_000, 15_000],
  ])('%s', (_, history, now, limit, paused, expected) => {
    expect(waitTime(history, now, limit, paused)).toBe(expected);
  });

  it('property: never more than `limit` requests start in any 60 s window', async () => {
    await fc.assert(fc.asyncProperty(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 1, max: 40 }), async (limit, count) => {
      let now = 0;
      const clock: Clock = { now: () => now, sleep: async (ms) => { now += ms; } };
      const limiter = createLimiter(limit, clock);
      const starts: number[] = [];
      for (let i = 0; i < count; i++) {
        await limiter.acquire();
        starts.push(now);
      }
      for (const t of starts) expect(starts.filter((s) => s >= t && s < t + 60_000).length).toBeLessThanOrEqual(limit);
    }));
  });

  it('stops waiting when the signal aborts', async () => {
    const clock: Clock = { now: () => 0, sleep: (_ms, signal) => new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason))) };
    const limiter = createLimiter(1, clock);
    await limiter.acquire();
    const controller = new AbortController();
    const waiting = limiter.acquire(controller.signal);
    controller.abort(new Error('stopping'));
    await expect(waiting).rejects.toThrow('stopping');
  });
});
