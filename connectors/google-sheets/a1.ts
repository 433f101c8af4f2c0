/** A1 ranges the connector sends. Tab names are always quoted, so a tab called `A1` or `Q1!` is safe. */

export function quoteTab(title: string): string {
  return `'${title.replace(/'/g, "''")}'`;
}

/** 0 → A, 25 → Z, 26 → AA. */
export function columnLetter(index: number): string {
  if (!Number.isInteger(index) || index < 0) throw new RangeError(`bad column index ${index}`);
  let n = index + 1;
  let out = '';
  while (n > 0) {
    const rem = (n - 1) % 26;
    out = String.fromCharCode(65 + rem) + out;
    n = Math.floor((n - 1) / 26);
  }
  return out;
}

/** Row `row` (0-based) from column A to column `lastCol` (0-based, inclusive). */
export function rowRange(tab: string, row: number, lastCol: number): string {
  return `${quoteTab(tab)}!A${row + 1}:${columnLetter(lastCol)}${row + 1}`;
}

/** Rows `from`..`to` (0-based, inclusive), columns A..`lastCol`. */
export function blockRange(tab: string, from: number, to: number, lastCol: number): string {
  return `${quoteTab(tab)}!A${from + 1}:${columnLetter(lastCol)}${to + 1}`;
}

export function columnRange(tab: string, col: number): string {
  const letter = columnLetter(col);
  return `${quoteTab(tab)}!${letter}:${letter}`;
}

export function headerRange(tab: string): string {
  return `${quoteTab(tab)}!1:1`;
}
