import { describe, expect, it } from 'vitest';
import { testClock } from '../test/support/clock.js';
import { PRUNE_CHUNK, pruneInChunks } from './prune-chunks.js';

/** A table of `rows` old rows whose each step forgets up to its limit, taking `stepMs` of the clock. */
function table(rows: number, clock: { advance(ms: number): void }, stepMs = 0) {
  const steps: number[] = [];
  return {
    steps,
    step: async (limit: number) => {
      steps.push(limit);
      clock.advance(stepMs);
      const gone = Math.min(limit, rows);
      rows -= gone;
      return gone;
    },
  };
}

describe('pruneInChunks', () => {
  it('forgets a chunk per step until a step forgets fewer than a chunk, and says how many went', async () => {
    const clock = testClock(0, { sleep: 'resolve' });
    const { steps, step } = table(5, clock);
    expect(await pruneInChunks(step, { clock, limit: 2 })).toBe(5);
    expect(steps).toEqual([2, 2, 2]);
  });

  it('takes one more step when the last chunk was full, and uses PRUNE_CHUNK unless told', async () => {
    const clock = testClock(0, { sleep: 'resolve' });
    const { steps, step } = table(2 * PRUNE_CHUNK, clock);
    expect(await pruneInChunks(step, { clock })).toBe(2 * PRUNE_CHUNK);
    expect(steps).toEqual([PRUNE_CHUNK, PRUNE_CHUNK, PRUNE_CHUNK]);
  });

  it('rests twice as long as each full step took before the next', async () => {
    const clock = testClock(0, { sleep: 'instant' });
    const { step } = table(5, clock, 7);
    await pruneInChunks(step, { clock, limit: 2 });
    expect(clock.slept).toEqual([14, 14]);
  });

  it('stops after the step under way when its signal aborts, also during a rest', async () => {
    const clock = testClock(0, { sleep: 'hold' });
    const abort = new AbortController();
    const { steps, step } = table(100, clock, 5);
    const pruning = pruneInChunks(step, { clock, limit: 10, signal: abort.signal });
    await new Promise((resolve) => setImmediate(resolve));
    expect(clock.slept).toEqual([10]);
    abort.abort(new Error('stopping'));
    expect(await pruning).toBe(10);
    expect(steps).toHaveLength(1);
  });

  it('rejects with a step\'s failure', async () => {
    const clock = testClock(0, { sleep: 'resolve' });
    let calls = 0;
    const step = async (limit: number) => {
      calls += 1;
      if (calls === 2) throw new Error('disk full (injected)');
      return limit;
    };
    await expect(pruneInChunks(step, { clock, limit: 3 })).rejects.toThrow('disk full');
    expect(calls).toBe(2);
  });
});
