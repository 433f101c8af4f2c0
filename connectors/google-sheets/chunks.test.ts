import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CELL_LIMIT, cellVerdict, chunkBySize, chunkRows } from './chunks.js';

describe('chunkRows', () => {
  it('property: blocks are consecutive, cover every row, and respect the cell and byte caps', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 10, max: 500 }), (count, width, chunkCells) => {
      const rows = Array.from({ length: count }, (_, i) => Array.from({ length: width }, (_, j) => `r${i}c${j}`));
      const blocks = chunkRows(rows, chunkCells, 5000);
      let next = 0;
      for (const b of blocks) {
        expect(b.start).toBe(next);
        expect(b.rows.length).toBeGreaterThan(0);
        expect(b.rows.length * width <= Math.max(chunkCells, width)).toBe(true);
        next += b.rows.length;
      }
      expect(next).toBe(count);
    }));
  });

  it('meets the call bound ceil(cells / chunkCells) for a 100,000-row roster of 22 columns', () => {
    const rows = Array.from({ length: 100_001 }, () => Array.from({ length: 22 }, () => 'abcdefgh'));
    expect(chunkRows(rows, 100_000).length).toBe(Math.ceil((100_001 * 22) / 100_000));
  });
});

describe('chunkBySize and cellVerdict', () => {
  it('splits before a chunk would pass the cap', () => {
    expect(chunkBySize([5, 5, 5, 20, 1], (n) => n, 10)).toEqual([[5, 5], [5], [20], [1]]);
  });

  it.each([
    [0, 1000, 'ok'], [CELL_LIMIT * 0.95, 0, 'near'], [CELL_LIMIT - 10, 10, 'near'], [CELL_LIMIT - 10, 11, 'over'],
  ])('%i in use + %i more is %s', (current, adding, verdict) => {
    expect(cellVerdict(current, adding)).toBe(verdict);
  });
});
