/**
 * spreadsheets.batchUpdate for the fake: addSheet, deleteSheet, updateSheetProperties and
 * deleteDimension. Like the real service the whole list is atomic: it is applied to a copy that
 * replaces the spreadsheet only when every request succeeded.
 */
import { assertCellLimit, badRequest, type FakeSheet, type FakeSpreadsheet } from './grid.js';

interface SheetProperties {
  sheetId?: number;
  title?: string;
  index?: number;
  hidden?: boolean;
  gridProperties?: { rowCount?: number; columnCount?: number };
}

type Request = {
  addSheet?: { properties?: SheetProperties };
  deleteSheet?: { sheetId: number };
  updateSheetProperties?: { properties: SheetProperties; fields: string };
  deleteDimension?: { range: { sheetId: number; dimension: 'ROWS' | 'COLUMNS'; startIndex: number; endIndex: number } };
};

export function sheetProperties(s: FakeSheet) {
  return {
    sheetId: s.sheetId,
    title: s.title,
    index: s.index,
    sheetType: 'GRID',
    gridProperties: { rowCount: s.rowCount, columnCount: s.columnCount },
    ...(s.hidden ? { hidden: true } : {}),
  };
}

function byId(book: FakeSpreadsheet, sheetId: number): FakeSheet {
  const sheet = book.sheets.find((s) => s.sheetId === sheetId);
  if (!sheet) throw badRequest(`Invalid requests: No grid with id: ${sheetId}`);
  return sheet;
}

function assertFreeTitle(book: FakeSpreadsheet, title: string, except?: FakeSheet): void {
  if (book.sheets.some((s) => s !== except && s.title.toLowerCase() === title.toLowerCase())) {
    throw badRequest(`Invalid requests: A sheet with the name "${title}" already exists. Please enter another name.`);
  }
}

function reindex(book: FakeSpreadsheet, moved?: FakeSheet, to?: number): void {
  const rest = book.sheets.filter((s) => s !== moved).sort((a, b) => a.index - b.index);
  if (moved && to !== undefined) rest.splice(Math.min(to, rest.length), 0, moved);
  else if (moved) rest.push(moved);
  rest.forEach((s, i) => (s.index = i));
  book.sheets = rest;
}

function addSheet(book: FakeSpreadsheet, p: SheetProperties, nextId: () => number) {
  const title = p.title ?? `Sheet${book.sheets.length + 1}`;
  assertFreeTitle(book, title);
  if (p.sheetId !== undefined && book.sheets.some((s) => s.sheetId === p.sheetId)) {
    throw badRequest(`Invalid requests: A sheet with id ${p.sheetId} already exists.`);
  }
  const sheet: FakeSheet = {
    sheetId: p.sheetId ?? nextId(),
    title,
    index: book.sheets.length,
    rowCount: p.gridProperties?.rowCount ?? 1000,
    columnCount: p.gridProperties?.columnCount ?? 26,
    rows: [],
    ...(p.hidden ? { hidden: true } : {}),
  };
  reindex(book, sheet, p.index);
  return { addSheet: { properties: sheetProperties(sheet) } };
}

function updateProperties(book: FakeSpreadsheet, p: SheetProperties, fields: string): void {
  const sheet = byId(book, p.sheetId ?? -1);
  const wanted = new Set(fields.split(',').map((f) => f.trim()));
  if (wanted.has('title') && p.title !== undefined) {
    assertFreeTitle(book, p.title, sheet);
    sheet.title = p.title;
  }
  const grid = p.gridProperties ?? {};
  if ((wanted.has('gridProperties.rowCount') || wanted.has('gridProperties')) && grid.rowCount !== undefined) {
    sheet.rowCount = grid.rowCount;
    sheet.rows.length = Math.min(sheet.rows.length, grid.rowCount);
  }
  if ((wanted.has('gridProperties.columnCount') || wanted.has('gridProperties')) && grid.columnCount !== undefined) {
    sheet.columnCount = grid.columnCount;
    sheet.rows = sheet.rows.map((row) => row?.slice(0, grid.columnCount));
  }
  if (wanted.has('index') && p.index !== undefined) reindex(book, sheet, p.index);
  if (wanted.has('hidden')) sheet.hidden = p.hidden === true;
  if (book.sheets.every((s) => s.hidden)) throw badRequest("Invalid requests: You can't hide all sheets in a document.");
}

function deleteDimension(book: FakeSpreadsheet, r: NonNullable<Request['deleteDimension']>['range']): void {
  const sheet = byId(book, r.sheetId);
  const limit = r.dimension === 'ROWS' ? sheet.rowCount : sheet.columnCount;
  if (!(r.startIndex >= 0 && r.endIndex > r.startIndex && r.endIndex <= limit)) {
    throw badRequest(`Invalid requests: deleteDimension range ${r.startIndex}..${r.endIndex} is outside the grid (${limit}).`);
  }
  const count = r.endIndex - r.startIndex;
  if (r.dimension === 'ROWS') {
    if (count >= sheet.rowCount) throw badRequest('Invalid requests: You can\'t delete all the rows on the sheet.');
    sheet.rows.splice(r.startIndex, count);
    sheet.rowCount -= count;
  } else {
    if (count >= sheet.columnCount) throw badRequest('Invalid requests: You can\'t delete all the columns on the sheet.');
    sheet.rows = sheet.rows.map((row) => row && [...row.slice(0, r.startIndex), ...row.slice(r.endIndex)]);
    sheet.columnCount -= count;
  }
}

export function applyBatchUpdate(book: FakeSpreadsheet, requests: Request[], cellLimit: number, nextId: () => number) {
  // A shallow copy: row arrays are shared until a request must change one (a column change copies them).
  const copy: FakeSpreadsheet = { ...book, sheets: book.sheets.map((s) => ({ ...s, rows: [...s.rows] })) };
  const replies = requests.map((req) => {
    if (req.addSheet) return addSheet(copy, req.addSheet.properties ?? {}, nextId);
    if (req.deleteSheet) {
      const sheet = byId(copy, req.deleteSheet.sheetId);
      if (copy.sheets.length === 1) throw badRequest("Invalid requests: You can't remove all the sheets in a document.");
      copy.sheets = copy.sheets.filter((s) => s !== sheet);
      reindex(copy);
      return {};
    }
    if (req.updateSheetProperties) {
      updateProperties(copy, req.updateSheetProperties.properties, req.updateSheetProperties.fields);
      return {};
    }
    if (req.deleteDimension) {
      deleteDimension(copy, req.deleteDimension.range);
      return {};
    }
    throw badRequest(`Invalid requests: the fake does not implement ${Object.keys(req).join(', ')}`);
  });
  assertCellLimit(copy, cellLimit);
  book.sheets = copy.sheets;
  return replies;
}
