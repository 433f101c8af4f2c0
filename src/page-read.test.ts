import { describe, expect, it } from 'vitest';
import { testClock } from '../test/support/clock.js';
import { createPageRead, PAGE_READ_MS } from './page-read.js';

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('createPageRead', () => {
  it('gives the value of a read that answers, and undefined for one that fails', async () => {
    const read = createPageRead(testClock(0, { sleep: 'timers' }));
    expect(await read(Promise.resolve([1, 2]))).toEqual([1, 2]);
    expect(await read(Promise.reject(new Error('store down')))).toBeUndefined();
  });

  it('gives undefined once a read has not answered for PAGE_READ_MS, not before', async () => {
    const clock = testClock(0, { sleep: 'timers' });
    const read = createPageRead(clock);
    let answer: unknown = 'waiting';
    void read(new Promise(() => {})).then((value) => (answer = value));
    clock.advance(PAGE_READ_MS - 250);
    await turn();
    expect(answer).toBe('waiting');
    clock.advance(250);
    await turn();
    expect(answer).toBeUndefined();
  });
});
