import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { BOM, csvField, csvHeader, csvLines, MACHINE_CSV, PEOPLE_CSV, toCsvRow } from './csv.js';

/** A minimal RFC 4180 reader, enough to check that what we write reads back intact. */
function parseCsv(text: string, separator = ','): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted && ch === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (quoted && ch === '"') quoted = false;
    else if (quoted) field += ch;
    else if (ch === '"') quoted = true;
    else if (ch === separator) {
      row.push(field);
      field = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += ch;
  }
  return rows;
}

describe('csv', () => {
  it.each([
    [null, ''],
    [undefined, ''],
    ['plain', 'plain'],
    ['Kwiatowa 4/5 ', 'Kwiatowa 4/5 '],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['cr\r', '"cr\r"'],
    [0, '0'],
    [1.5, '1.5'],
    [true, 'true'],
    [{ a: 1 }, '"{""a"":1}"'],
    ['Zażółć gęślą jaźń', 'Zażółć gęślą jaźń'],
  ])('field %j → %j', (value, expected) => {
    expect(csvField(value)).toBe(expected);
  });

  it('writes a header and CRLF rows', () => {
    const text = [...csvLines<{ a: number; b: string | null }>(['a', 'b'], [{ a: 1, b: 'x,y' }, { a: 2, b: null }])].join('');
    expect(text).toBe('a,b\r\n1,"x,y"\r\n2,\r\n');
    expect(csvHeader(['x'])).toBe('x\r\n');
  });

  it.each([',', ';', '\t'] as const)('any strings read back intact with the separator %j', (separator) => {
    const format = { ...MACHINE_CSV, separator };
    fc.assert(
      fc.property(fc.array(fc.array(fc.string({ unit: 'grapheme' }), { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 5 }), (rows) => {
        const text = rows.map((row) => toCsvRow(row, format)).join('');
        // A lone empty field is written as an empty line; read it back as one empty field.
        expect(parseCsv(text, separator).map((r) => (r.length === 0 ? [''] : r))).toEqual(rows);
      }),
    );
  });

  it('writes for people: a byte order mark, labels, ";" and neutralized formulas', () => {
    const labels = { a: 'Column A', b: 'Column B' };
    const text = [...csvLines<{ a: string; b: string | number }>(['a', 'b'], [{ a: '=1+1', b: '+48 600 100 200' }, { a: 'x;y', b: -5 }], PEOPLE_CSV, labels)].join('');
    expect(text).toBe(`${BOM}Column A;Column B\r\n'=1+1;+48 600 100 200\r\n"x;y";-5\r\n`);
    expect(csvHeader(['a', 'b'], MACHINE_CSV, labels)).toBe('a,b\r\n');
  });
});
