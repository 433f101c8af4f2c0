import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readCsv } from './csv-read.js';

/** RFC 4180 the plain way, quoting only where needed, CRLF after every row. */
const encode = (rows: string[][]): string =>
  rows.map((row) => row.map((v) => (/[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v)).join(',') + '\r\n').join('');

const cellText = fc.oneof(fc.string({ unit: 'grapheme' }), fc.constantFrom('', ',', '"', '\r\n', '\n', 'Zażółć "gęślą", jaźń\r\n'));
const table = fc.array(fc.array(cellText, { minLength: 2, maxLength: 5 }), { maxLength: 6 });

describe('readCsv', () => {
  it.each([
    ['plain', 'a,b\r\nc,d\r\n', [['a', 'b'], ['c', 'd']]],
    ['quoted comma, quote and newline', '"a,1","say ""hi""","x\r\ny"\r\n', [['a,1', 'say "hi"', 'x\r\ny']]],
    ['empty fields', ',\r\n', [['', '']]],
    ['LF line ends', 'a\nb\n', [['a'], ['b']]],
    ['Polish diacritics', 'Łódź,żółw\r\n', [['Łódź', 'żółw']]],
  ])('%s', (_name, text, rows) => {
    expect(readCsv(text)).toEqual({ rows, completeLength: text.length });
  });

  it.each([
    ['a row without its line break', 'a,b\r\nc,d', 5],
    ['a row cut inside a quoted newline', 'a,b\r\n"c\r\nd', 5],
    ['a row cut between CR and LF', 'a,b\r\nc,d\r', 5],
    ['only a partial header', 'recordId,ev', 0],
  ])('%s: the torn tail is not a row', (_name, text, completeLength) => {
    const result = readCsv(text);
    expect(result.completeLength).toBe(completeLength);
    expect(result.rows).toEqual(readCsv(text.slice(0, completeLength)).rows);
  });

  it('reads what a standard writer wrote, like csv-parse does', () => {
    fc.assert(
      fc.property(table, (rows) => {
        const text = encode(rows);
        expect(readCsv(text).rows).toEqual(rows);
        expect(readCsv(text).rows).toEqual(parse(text, { relax_column_count: true }));
      }),
    );
  });

  it('any prefix reads as the rows completed within it, and nothing of the torn one', () => {
    fc.assert(
      fc.property(table.filter((rows) => rows.length > 0), fc.nat(), (rows, cut) => {
        const text = encode(rows);
        const prefix = text.slice(0, cut % (text.length + 1));
        const { rows: read, completeLength } = readCsv(prefix);
        expect(read).toEqual(rows.slice(0, read.length));
        expect(encode(read)).toBe(prefix.slice(0, completeLength));
      }),
    );
  });
});
