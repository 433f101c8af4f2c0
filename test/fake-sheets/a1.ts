/**
 * A1 notation as the Sheets API reads it, for the fake server. Kept apart from the connector's own
 * A1 builder on purpose: a shared helper would hide a bug on both sides of the wire.
 * Rows and columns are 0-based here; `end*` is exclusive and undefined means "to the grid's edge".
 */
export interface GridRange {
  title: string;
  startRow: number;
  startCol: number;
  endRow: number | undefined;
  endCol: number | undefined;
}

export class A1Error extends Error {}

/** Splits `'It''s'!A1:B2` into the sheet title and the cell part (undefined when there is none). */
export function splitSheet(range: string): { title: string; cells: string | undefined } {
  if (range.startsWith("'")) {
    let i = 1;
    let title = '';
    for (; i < range.length; i++) {
      const ch = range[i];
      if (ch === "'" && range[i + 1] === "'") { title += "'"; i++; continue; }
      if (ch === "'") break;
      title += ch;
    }
    if (i >= range.length) throw new A1Error(`Unable to parse range: ${range}`);
    const rest = range.slice(i + 1);
    if (rest === '') return { title, cells: undefined };
    if (!rest.startsWith('!')) throw new A1Error(`Unable to parse range: ${range}`);
    return { title, cells: rest.slice(1) };
  }
  const bang = range.lastIndexOf('!');
  if (bang < 0) return { title: range, cells: undefined };
  return { title: range.slice(0, bang), cells: range.slice(bang + 1) };
}

export function columnIndex(letters: string): number {
  let n = 0;
  for (const ch of letters.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n - 1;
}

export function columnLetters(index: number): string {
  let n = index + 1;
  let out = '';
  while (n > 0) {
    const rem = (n - 1) % 26;
    out = String.fromCharCode(65 + rem) + out;
    n = Math.floor((n - 1) / 26);
  }
  return out;
}

interface Ref { col: number | undefined; row: number | undefined }

function parseRef(text: string, whole: string): Ref {
  const m = /^\$?([A-Za-z]*)\$?(\d*)$/.exec(text);
  if (!m || (m[1] === '' && m[2] === '')) throw new A1Error(`Unable to parse range: ${whole}`);
  return {
    col: m[1] ? columnIndex(m[1]) : undefined,
    row: m[2] ? Number(m[2]) - 1 : undefined,
  };
}

/** Parses the cell part (`A1`, `A1:C5`, `A:C`, `2:4`, `A2:C`) of a range on sheet `title`. */
export function parseCells(title: string, cells: string | undefined, whole: string): GridRange {
  if (cells === undefined) return { title, startRow: 0, startCol: 0, endRow: undefined, endCol: undefined };
  const [a, b, extra] = cells.split(':');
  if (a === undefined || extra !== undefined) throw new A1Error(`Unable to parse range: ${whole}`);
  const start = parseRef(a, whole);
  if (b === undefined) {
    if (start.col === undefined || start.row === undefined) throw new A1Error(`Unable to parse range: ${whole}`);
    return { title, startRow: start.row, startCol: start.col, endRow: start.row + 1, endCol: start.col + 1 };
  }
  const end = parseRef(b, whole);
  return {
    title,
    startRow: start.row ?? 0,
    startCol: start.col ?? 0,
    endRow: end.row === undefined ? undefined : end.row + 1,
    endCol: end.col === undefined ? undefined : end.col + 1,
  };
}

export function formatRange(r: { title: string; startRow: number; startCol: number; endRow: number; endCol: number }): string {
  const title = `'${r.title.replace(/'/g, "''")}'`;
  return `${title}!${columnLetters(r.startCol)}${r.startRow + 1}:${columnLetters(r.endCol - 1)}${r.endRow}`;
}
