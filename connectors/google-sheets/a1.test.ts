import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { blockRange, columnLetter, columnRange, headerRange, quoteTab, rowRange } from './a1.js';
import { columnIndex, parseCells, splitSheet } from '../../test/fake-sheets/a1.js';

describe('a1', () => {
  it.each([[0, 'A'], [25, 'Z'], [26, 'AA'], [51, 'AZ'], [52, 'BA'], [701, 'ZZ'], [702, 'AAA']])('column %i is %s', (i, letters) => {
    expect(columnLetter(i)).toBe(letters);
  });

  it('quotes every tab name, doubling apostrophes', () => {
    expect(quoteTab("Kids' list")).toBe("'Kids'' list'");
    expect(rowRange('A1', 4, 2)).toBe("'A1'!A5:C5");
    expect(blockRange('Roster', 0, 9, 21)).toBe("'Roster'!A1:V10");
    expect(columnRange('S', 27)).toBe("'S'!AB:AB");
    expect(headerRange('S')).toBe("'S'!1:1");
  });

  it('round-trips through the fake server parser (independent implementation)', () => {
    fc.assert(fc.property(fc.string({ minLength: 1, maxLength: 20 }), fc.nat(2000), fc.nat(100), (tab, row, col) => {
      const { title, cells } = splitSheet(rowRange(tab, row, col));
      expect(title).toBe(tab);
      expect(parseCells(title, cells, '')).toMatchObject({ startRow: row, endRow: row + 1, startCol: 0, endCol: col + 1 });
      expect(columnIndex(columnLetter(col))).toBe(col);
    }));
  });

  it('rejects a negative column', () => {
    expect(() => columnLetter(-1)).toThrow(RangeError);
  });
});
