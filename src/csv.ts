import { neutralizeFormula } from './spreadsheet-formula.js';

/**
 * CSV, shared by the `file` connector's roster export and the accounting ledger. Rows end in CRLF
 * (RFC 4180's line break, which Excel and every standard parser read); a field is quoted when it
 * holds the separator, a quote, CR or LF, and quotes inside are doubled. Values pass through
 * unchanged (no trimming: the bridge never "fixes" data) but for formula neutralization when the
 * format asks for it; null and undefined become empty fields, objects and arrays their JSON text.
 */
export interface CsvFormat {
  separator: ',' | ';' | '\t';
  /** A UTF-8 byte order mark first, so that a spreadsheet program reads the file as UTF-8. */
  bom: boolean;
  /** The header row: field names (`studentId`) or readable labels (`Student ID`). */
  header: 'keys' | 'labels';
  /** `neutralize`: a cell a spreadsheet would run as a formula gets a leading `'` (spreadsheet-formula.ts). */
  formulas: 'neutralize' | 'keep';
}

/** RFC 4180 as machines read it. */
export const MACHINE_CSV: CsvFormat = { separator: ',', bom: false, header: 'keys', formulas: 'keep' };

/** What a spreadsheet program opens correctly in a Polish (or any `;`-list) locale, safely. */
export const PEOPLE_CSV: CsvFormat = { separator: ';', bom: true, header: 'labels', formulas: 'neutralize' };

export const BOM = '\uFEFF';

function cellText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value instanceof Date) return value.toISOString();
  return JSON.stringify(value);
}

export function csvField(value: unknown, format: CsvFormat = MACHINE_CSV): string {
  if (value === null || value === undefined) return '';
  const raw = cellText(value);
  const text = format.formulas === 'neutralize' ? neutralizeFormula(raw) : raw;
  const quote = text.includes(format.separator) || /["\r\n]/.test(text);
  return quote ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One CSV line, CRLF included. */
export function toCsvRow(values: readonly unknown[], format: CsvFormat = MACHINE_CSV): string {
  return `${values.map((value) => csvField(value, format)).join(format.separator)}\r\n`;
}

/** The start of a file: the byte order mark when asked for, then the header line. */
export function csvHeader<K extends string>(columns: readonly K[], format: CsvFormat = MACHINE_CSV, labels?: Readonly<Record<K, string>>): string {
  const names = format.header === 'labels' && labels ? columns.map((column) => labels[column]) : columns;
  return `${format.bom ? BOM : ''}${toCsvRow(names, format)}`;
}

/** A whole document: the header, then one line per object, fields in `columns` order. */
export function* csvLines<T extends object>(
  columns: readonly (keyof T & string)[],
  rows: Iterable<T>,
  format: CsvFormat = MACHINE_CSV,
  labels?: Readonly<Record<keyof T & string, string>>,
): Generator<string> {
  yield csvHeader(columns, format, labels);
  for (const row of rows) yield toCsvRow(columns.map((column) => row[column]), format);
}
