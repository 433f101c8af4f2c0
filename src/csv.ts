/**
 * RFC 4180 CSV, shared by the `file` connector's roster export and the accounting ledger. Rows end
 * in CRLF (the RFC's line break, which Excel and every standard parser read); a field is quoted when
 * it holds a comma, a quote, CR or LF, and quotes inside are doubled. Values pass through unchanged
 * (no trimming: the bridge never "fixes" data), null and undefined become empty fields, objects and
 * arrays their JSON text.
 */
const NEEDS_QUOTES = /[",\r\n]/;

export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint'
        ? String(value)
        : value instanceof Date
          ? value.toISOString()
          : JSON.stringify(value);
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One CSV line, CRLF included. */
export function toCsvRow(values: readonly unknown[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

/** The header line for `columns`. */
export function csvHeader(columns: readonly string[]): string {
  return toCsvRow(columns);
}

/** A whole document: the header, then one line per object, fields in `columns` order. */
export function* csvLines<T extends object>(columns: readonly (keyof T & string)[], rows: Iterable<T>): Generator<string> {
  yield csvHeader(columns);
  for (const row of rows) yield toCsvRow(columns.map((column) => row[column]));
}
