import { describe, expect, it } from 'vitest';
import { testClock } from '../test/support/clock.js';
import { within } from './within.js';

describe('within', () => {
  it('gives the value of work that settles in time, or its error, and stops its deadline', async () => {
    const signals: AbortSignal[] = [];
    const clock = { sleep: (_ms: number, signal?: AbortSignal) => (signals.push(signal!), new Promise<void>(() => {})) };
    expect(await within(Promise.resolve(7), 1000, clock)).toEqual({ value: 7 });
    await expect(within(Promise.reject(new Error('no')), 1000, clock)).rejects.toThrow('no');
    expect(signals.map((s) => s.aborted)).toEqual([true, true]);
  });

  it('gives undefined once the time has passed, and leaves a later failure unheard', async () => {
    const clock = testClock(0, { sleep: 'timers' });
    let fail!: (error: Error) => void;
    const work = new Promise<number>((_resolve, reject) => (fail = reject));
    let answer: { value: number } | undefined | 'none' = 'none';
    const waiting = within(work, 1000, clock).then((a) => (answer = a));
    clock.advance(999);
    await new Promise((resolve) => setImmediate(resolve));
    expect(answer).toBe('none');
    clock.advance(1);
    await waiting;
    expect(answer).toBeUndefined();
    // No unhandled rejection: vitest fails the run on one.
    fail(new Error('too late'));
    await new Promise((resolve) => setImmediate(resolve));
  });
});
