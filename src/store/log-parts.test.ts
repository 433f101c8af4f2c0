import { describe, expect, it } from 'vitest';
import { LOG_PARTS, partOf } from './log-parts.js';

describe('the parts of the delivery log', () => {
  it('puts each order key in one part, spread over all of them', () => {
    // Fixed values: replicas of different versions must agree on a key's part.
    expect([partOf(''), partOf('events:1'), partOf('invoices:1'), partOf('students:123')]).toEqual([5, 1, 8, 7]);
    const counts = new Array<number>(LOG_PARTS).fill(0);
    for (let i = 0; i < 16_000; i++) counts[partOf(`invoices:${i}`)]! += 1;
    expect(Math.min(...counts)).toBeGreaterThan(800);
    expect(Math.max(...counts)).toBeLessThan(1200);
  });
});
