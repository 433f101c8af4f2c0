import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BOM, MACHINE_CSV } from '../../src/csv.js';
import { ROSTER_COLUMNS, ROSTER_LABELS, type RosterRecord, type RosterRow } from '../../src/records.js';
import { rosterCsv } from './roster-csv.js';
import { fileConfigSchema } from './schema.js';

/**
 * A spreadsheet runs a cell as a formula when it starts with `=`, `@`, a tab or a carriage return,
 * or with `+` or `-` followed by anything but digits, spaces and `()./-`. Written out here apart
 * from the implementation, as the README states it.
 */
const isFormula = (cell: string) => /^[=@\t\r]/.test(cell) || (/^[+-]/.test(cell) && !/^[+-][0-9 ()./-]*$/.test(cell));

/** Text a person (or an attacker) could type into the school service, formula-like text favoured. */
const typed = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('=1+1', '@SUM(A1)', '\t=x', '\r=x', '+48 600 100 200', '-12.50', '-1+1', '+cmd|x', '=HYPERLINK("http://x";"y")', 'a;b', ''),
  fc.tuple(fc.constantFrom('=', '+', '-', '@', '\t', '\r'), fc.string()).map(([head, tail]) => head + tail),
);
const text = fc.option(typed, { nil: null });
const id = fc.option(fc.integer({ min: -5, max: 1_000_000 }), { nil: null });
const flag = fc.option(fc.constantFrom(0, 1), { nil: null });
const row: fc.Arbitrary<RosterRow> = fc.record({
  studentId: fc.integer({ min: 1, max: 1_000_000 }), userId: id, login: text, firstName: text, lastName: text, fullname: text,
  email: text, phone: text, mobile: text, street: text, zipCode: text, city: text, language: text, isActive: flag, isAdult: flag,
  isArchived: flag, parentUserId: id, parentFirstName: text, parentLastName: text, parentEmail: text, parentPhone: text, parentMobile: text,
});
const roster = (rows: RosterRow[]): RosterRecord => ({ id: 'roster:2026-11-22:x', stream: 'roster', key: '2026-11-22', date: '2026-11-22', generatedAt: '2026-11-22T10:00:00.000Z', rows });

describe('the roster CSV', () => {
  const people = fileConfigSchema.parse({ name: 'files', type: 'file', streams: ['roster'] }).csv;

  it('no cell of any roster can be read as a formula, and every other cell reads back as it was', () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 8 }), (rows) => {
        const written = [...rosterCsv(roster(rows), people)].join('');
        expect(written.startsWith(BOM)).toBe(true);
        const cells = parse(written, { bom: true, delimiter: ';', relax_column_count: false }) as string[][];
        expect(cells).toHaveLength(rows.length + 1);
        for (const line of cells) for (const cell of line) expect(isFormula(cell), JSON.stringify(cell)).toBe(false);
        rows.forEach((r, i) => {
          ROSTER_COLUMNS.forEach((column, c) => {
            const value = r[column] === null ? '' : String(r[column]);
            expect(cells[i + 1]![c]).toBe(isFormula(value) ? `'${value}` : value);
          });
        });
      }),
    );
  });

  it('is for people by default: labels, ";", a byte order mark; a phone number stays as it is', () => {
    const written = [...rosterCsv(roster([{ ...emptyRow(), studentId: 7, phone: '+48 600 100 200', lastName: '=evil()' }]), people)].join('');
    const [header, line] = written.split('\r\n');
    expect(header).toBe(BOM + ROSTER_COLUMNS.map((c) => ROSTER_LABELS[c]).join(';'));
    expect(line).toContain(";'=evil();");
    expect(line).toContain(';+48 600 100 200;');
  });

  it('a machine reader gets RFC 4180 with the field names and the values untouched', () => {
    const machine = fileConfigSchema.parse({ name: 'files', type: 'file', streams: ['roster'], csv: { bom: false, separator: ',', header: 'keys', formulas: 'keep' } }).csv;
    expect(machine).toEqual(MACHINE_CSV);
    const written = [...rosterCsv(roster([{ ...emptyRow(), studentId: 7, lastName: '=evil()' }]), machine)].join('');
    expect(written.split('\r\n')[0]).toBe(ROSTER_COLUMNS.join(','));
    expect(written).toContain(',=evil(),');
  });
});

function emptyRow(): RosterRow {
  return Object.fromEntries(ROSTER_COLUMNS.map((c) => [c, null])) as unknown as RosterRow;
}
