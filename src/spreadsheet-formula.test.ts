import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { neutralizeFormula, readsAsFormula } from './spreadsheet-formula.js';

describe('formula neutralization', () => {
  it.each([
    ['=1+1', "'=1+1"],
    ['=HYPERLINK("http://x","y")', '\'=HYPERLINK("http://x","y")'],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['\rx', "'\rx"],
    ['+1+cmd', "'+1+cmd"],
    ['-2+3', "'-2+3"],
    ['+A1', "'+A1"],
    ['-', '-'],
    ['+48 600 100 200', '+48 600 100 200'],
    ['+48 (22) 600-100-200', '+48 (22) 600-100-200'],
    ['-12.50', '-12.50'],
    ['-2026/01/02', '-2026/01/02'],
    ['Kwiatowa 4/5 ', 'Kwiatowa 4/5 '],
    ['a=b', 'a=b'],
    ['', ''],
    [' =1', ' =1'],
  ])('%j → %j', (text, expected) => {
    expect(neutralizeFormula(text)).toBe(expected);
  });

  it('what it returns never reads as a formula, and it only ever adds one leading quote', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string().map((s) => `=${s}`), fc.string().map((s) => `+${s}`), fc.string().map((s) => `-${s}`)), (text) => {
        const out = neutralizeFormula(text);
        expect(readsAsFormula(out)).toBe(false);
        expect(out === text || out === `'${text}`).toBe(true);
      }),
    );
  });
});
