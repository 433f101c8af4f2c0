/**
 * The spreadsheet model of the fake Sheets API: sheets of sparse cells with a grid size that
 * counts toward the workbook cell limit, like the real service. RAW input only: values are kept
 * exactly as sent (so `00123` and `=1+1` stay text), `null` skips a cell and `""` clears it.
 */
import { formatRange, type GridRange } from './a1.js';

export type Cell = string | number | boolean;

export interface FakeSheet {
  sheetId: number;
  title: string;
  index: number;
  rowCount: number;
  columnCount: number;
  hidden?: boolean;
  rows: (Cell | undefined)[][];
}

export interface FakeSpreadsheet {
  spreadsheetId: string;
  title: string;
  sheets: FakeSheet[];
}

/** An error the fake answers with, in Google's `{error:{code,message,status}}` shape. */
export class ApiError extends Error {
  constructor(readonly code: number, message: string, readonly status: string) {
    super(message);
  }
}

export const badRequest = (message: string) => new ApiError(400, message, 'INVALID_ARGUMENT');

export function cellCount(book: FakeSpreadsheet): number {
  return book.sheets.reduce((sum, s) => sum + s.rowCount * s.columnCount, 0);
}

export function assertCellLimit(book: FakeSpreadsheet, limit: number): void {
  if (cellCount(book) > limit) {
    throw badRequest(`This action would increase the number of cells in the workbook above the limit of ${limit} cells.`);
  }
}

export function findSheet(book: FakeSpreadsheet, title: string): FakeSheet {
  const sheet = book.sheets.find((s) => s.title === title);
  if (!sheet) throw badRequest(`Unable to parse range: ${title}`);
  return sheet;
}

/** The used part of the sheet: rows up to the last one with a value, cells up to each row's last value. */
function trimmed(row: (Cell | undefined)[] | undefined): (Cell | undefined)[] {
  if (!row) return [];
  let end = row.length;
  while (end > 0 && (row[end - 1] === undefined || row[end - 1] === '')) end--;
  return row.slice(0, end);
}

export function readRange(sheet: FakeSheet, r: GridRange, unformatted: boolean): { range: string; values: Cell[][] } {
  // An open end means "to the grid's edge" (A:A is the whole column); a bounded end beyond it is an error.
  if ((r.endRow ?? 0) > sheet.rowCount || (r.endCol ?? 0) > sheet.columnCount || r.startCol >= sheet.columnCount) {
    throw badRequest(`Range (${r.title}) exceeds grid limits. Max rows: ${sheet.rowCount}, max columns: ${sheet.columnCount}`);
  }
  const endRow = Math.min(r.endRow ?? sheet.rowCount, sheet.rowCount);
  const endCol = Math.min(r.endCol ?? sheet.columnCount, sheet.columnCount);
  const values: Cell[][] = [];
  for (let row = r.startRow; row < endRow; row++) {
    const cells = trimmed(sheet.rows[row]?.slice(r.startCol, endCol));
    values.push(cells.map((c) => (c === undefined ? '' : unformatted ? c : String(c))));
  }
  while (values.length > 0 && values[values.length - 1]!.length === 0) values.pop();
  const range = formatRange({ title: sheet.title, startRow: r.startRow, startCol: r.startCol, endRow: Math.max(endRow, r.startRow + 1), endCol: Math.max(endCol, r.startCol + 1) });
  return { range, values };
}

function assertCellValue(value: unknown): asserts value is Cell | null {
  const ok = value === null || ['string', 'number', 'boolean'].includes(typeof value);
  if (!ok) throw badRequest(`Invalid values: ${JSON.stringify(value)}`);
  if (typeof value === 'string' && value.length > 50_000) {
    throw badRequest('Your input contains more than the maximum of 50000 characters in a single cell.');
  }
}

/** Checks a write completely before anything changes, so a failed request leaves the sheet as it was. */
export function checkWrite(sheet: FakeSheet, r: GridRange, values: unknown[][]): void {
  const width = Math.max(0, ...values.map((row) => row.length));
  if (r.endRow !== undefined && r.startRow + values.length > r.endRow) {
    throw badRequest(`Requested writing within range [${r.title}], but tried writing to row [${r.startRow + values.length}]`);
  }
  if (r.endCol !== undefined && r.startCol + width > r.endCol) {
    throw badRequest(`Requested writing within range [${r.title}], but tried writing to column [${r.startCol + width}]`);
  }
  if (r.startRow + values.length > sheet.rowCount || r.startCol + width > sheet.columnCount) {
    throw badRequest(`Range (${r.title}) exceeds grid limits. Max rows: ${sheet.rowCount}, max columns: ${sheet.columnCount}`);
  }
  for (const row of values) for (const value of row) assertCellValue(value);
}

export function writeRange(sheet: FakeSheet, r: GridRange, values: unknown[][]): { updatedRange: string; updatedRows: number; updatedColumns: number; updatedCells: number } {
  checkWrite(sheet, r, values);
  const width = Math.max(0, ...values.map((row) => row.length));
  values.forEach((row, i) => {
    row.forEach((value, j) => {
      if (value === null) return;
      const target = (sheet.rows[r.startRow + i] ??= []);
      target[r.startCol + j] = value === '' ? undefined : (value as Cell);
    });
  });
  return {
    updatedRange: formatRange({ title: sheet.title, startRow: r.startRow, startCol: r.startCol, endRow: r.startRow + Math.max(values.length, 1), endCol: r.startCol + Math.max(width, 1) }),
    updatedRows: values.length,
    updatedColumns: width,
    updatedCells: values.reduce((n, row) => n + row.length, 0),
  };
}

function rowHasValue(row: (Cell | undefined)[] | undefined, startCol: number, endCol: number): boolean {
  if (!row) return false;
  for (let c = startCol; c < Math.min(endCol, row.length); c++) if (row[c] !== undefined) return true;
  return false;
}

/** values.append: finds the table that starts at the range and writes after its last row, growing the grid. */
export function appendRows(sheet: FakeSheet, r: GridRange, values: unknown[][], insertRows: boolean, cellsLeft: number) {
  const endCol = r.endCol ?? sheet.columnCount;
  for (const row of values) for (const value of row) assertCellValue(value);
  let last = r.startRow - 1;
  for (let row = r.startRow; row < sheet.rowCount; row++) if (rowHasValue(sheet.rows[row], r.startCol, endCol)) last = row;
  const at = last + 1;
  const width = Math.max(0, ...values.map((row) => row.length));
  const rowCount = insertRows ? sheet.rowCount + values.length : Math.max(sheet.rowCount, at + values.length);
  const columnCount = Math.max(sheet.columnCount, r.startCol + width);
  if (rowCount * columnCount - sheet.rowCount * sheet.columnCount > cellsLeft) {
    throw badRequest(`This action would increase the number of cells in the workbook above the limit of ${cellsLeft + sheet.rowCount * sheet.columnCount} cells.`);
  }
  if (insertRows) {
    sheet.rows.splice(at, 0, ...values.map(() => []));
    sheet.rowCount += values.length;
  } else {
    sheet.rowCount = Math.max(sheet.rowCount, at + values.length);
  }
  sheet.columnCount = Math.max(sheet.columnCount, r.startCol + width);
  const tableRange = last >= r.startRow
    ? formatRange({ title: sheet.title, startRow: r.startRow, startCol: r.startCol, endRow: last + 1, endCol: Math.max(endCol, r.startCol + 1) })
    : undefined;
  const updates = writeRange(sheet, { title: sheet.title, startRow: at, startCol: r.startCol, endRow: undefined, endCol: undefined }, values);
  return { tableRange, updates };
}

export function clearRange(sheet: FakeSheet, r: GridRange): void {
  const endRow = Math.min(r.endRow ?? sheet.rowCount, sheet.rowCount);
  const endCol = r.endCol ?? sheet.columnCount;
  for (let row = r.startRow; row < endRow; row++) {
    const cells = sheet.rows[row];
    if (cells) for (let c = r.startCol; c < Math.min(endCol, cells.length); c++) cells[c] = undefined;
  }
}
