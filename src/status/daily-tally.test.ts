import { describe, expect, it } from 'vitest';
import { createDailyTally } from './daily-tally.js';

describe('daily tally', () => {
  it('counts per local day and starts again at local midnight', () => {
    const tally = createDailyTally(['received', 'rejected'] as const, 'Europe/Warsaw');
    const beforeMidnight = Date.parse('2026-11-22T22:59:00Z'); // 23:59 in Warsaw
    tally.add('received', beforeMidnight);
    tally.add('received', beforeMidnight);
    tally.add('rejected', beforeMidnight);
    expect(tally.today(beforeMidnight)).toEqual({ received: 2, rejected: 1 });
    const afterMidnight = Date.parse('2026-11-22T23:01:00Z'); // 00:01 the next day in Warsaw
    expect(tally.today(afterMidnight)).toEqual({ received: 0, rejected: 0 });
    tally.add('rejected', afterMidnight);
    expect(tally.today(afterMidnight)).toEqual({ received: 0, rejected: 1 });
  });
});
