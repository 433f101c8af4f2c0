import { describe, expect, it } from 'vitest';
import { testClock } from '../test/support/clock.js';
import { createDeadlines } from './deadlines.js';

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('createDeadlines', () => {
  it('gives the value or the error of work that settles in time', async () => {
    const deadlines = createDeadlines(testClock(0, { sleep: 'timers' }), 1000);
    expect(await deadlines.within(Promise.resolve(7))).toEqual({ value: 7 });
    await expect(deadlines.within(Promise.reject(new Error('no')))).rejects.toThrow('no');
  });

  it('gives undefined at the first look after the time has passed, each wait by its own start', async () => {
    const clock = testClock(0, { sleep: 'timers' });
    const deadlines = createDeadlines(clock, 1000, 250);
    const answers: unknown[] = [];
    let fail!: (error: Error) => void;
    void deadlines.within(new Promise((_resolve, reject) => (fail = reject))).then((a) => answers.push(['first', a]));
    clock.advance(500);
    await turn();
    void deadlines.within(new Promise(() => {})).then((a) => answers.push(['second', a]));
    clock.advance(250);
    await turn();
    clock.advance(250);
    await turn();
    expect(answers).toEqual([['first', undefined]]);
    clock.advance(500);
    await turn();
    expect(answers).toEqual([['first', undefined], ['second', undefined]]);
    // Nobody hears a failure that comes after the wait ended (vitest fails a run on an unhandled one).
    fail(new Error('too late'));
    await turn();
  });

  it('stops looking once nothing waits', async () => {
    const clock = testClock(0, { sleep: 'timers' });
    const deadlines = createDeadlines(clock, 1000, 250);
    await deadlines.within(Promise.resolve(1));
    clock.advance(250);
    await turn();
    const sleeps = clock.slept.length;
    clock.advance(1000);
    await turn();
    expect(clock.slept.length).toBe(sleeps);
  });
});
