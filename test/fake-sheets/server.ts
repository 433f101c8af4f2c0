/**
 * A fake Google Sheets API v4 on loopback, for tests that go through the real `@googleapis/sheets`
 * client (point the client's `rootUrl` at `fake.rootUrl`). It implements the subset the connector
 * uses, faithfully enough to catch wrong ranges and wrong value options: A1 ranges, RAW values,
 * values.get/batchGet/update/append/clear/batchUpdate, spreadsheets.get/batchUpdate, bearer and
 * share checks, the workbook cell limit, request counting and 429/5xx injection.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { A1Error, parseCells, splitSheet, type GridRange } from './a1.js';
import { applyBatchUpdate, sheetProperties } from './batch-update.js';
import { assertShared, authenticate, type AuthOptions, type ServiceAccount } from './auth.js';
import {
  ApiError, appendRows, badRequest, cellCount, checkWrite, clearRange, findSheet, readRange, writeRange,
  type Cell, type FakeSheet, type FakeSpreadsheet,
} from './grid.js';

export interface FakeSheetsOptions {
  tokens?: string[];
  serviceAccounts?: ServiceAccount[];
  /** Service-account e-mails the spreadsheets are shared with (default: every configured account). */
  sharedWith?: string[];
  cellLimit?: number;
}

export interface FakeCall { method: string; kind: 'read' | 'write'; status: number }

interface Injected { status: number; retryAfter: string | undefined }

export interface FakeSheets {
  /** For `sheets({ rootUrl })`: the fake serves `/v4/...` at its root. */
  rootUrl: string;
  calls: FakeCall[];
  reads(): number;
  writes(): number;
  resetCalls(): void;
  createSpreadsheet(id: string, tabs?: { title: string; rows?: Cell[][]; rowCount?: number; columnCount?: number }[]): FakeSpreadsheet;
  spreadsheet(id: string): FakeSpreadsheet;
  /** The used cells of a tab as the API would return them unformatted (for assertions). */
  values(id: string, title: string): Cell[][];
  cells(id: string): number;
  /** The next `times` requests answer `status` (e.g. 429) before any other check. */
  failNext(status: number, options?: { times?: number; retryAfter?: string }): void;
  close(): Promise<void>;
}

type Route = (ctx: { book: FakeSpreadsheet; query: URLSearchParams; body: any; range: string | undefined }) => unknown;

export async function startFakeSheets(options: FakeSheetsOptions = {}): Promise<FakeSheets> {
  const books = new Map<string, FakeSpreadsheet>();
  const calls: FakeCall[] = [];
  const injected: Injected[] = [];
  const cellLimit = options.cellLimit ?? 10_000_000;
  let lastSheetId = 1000;
  const nextId = () => ++lastSheetId;
  const auth: AuthOptions = {
    tokens: options.tokens ?? [],
    serviceAccounts: options.serviceAccounts ?? [],
    sharedWith: new Set(options.sharedWith ?? (options.serviceAccounts ?? []).map((a) => a.email)),
    now: () => Date.now(),
  };

  const parseRange = (book: FakeSpreadsheet, text: string): { sheet: FakeSheet; r: GridRange } => {
    try {
      const { title, cells } = splitSheet(text);
      const sheet = findSheet(book, title);
      return { sheet, r: parseCells(title, cells, text) };
    } catch (error) {
      if (error instanceof A1Error) throw badRequest(error.message);
      throw error;
    }
  };

  const requireRaw = (option: unknown) => {
    if (option === undefined || option === null || option === '') throw badRequest("'valueInputOption' is required but not specified");
    if (option !== 'RAW') throw badRequest(`the fake implements valueInputOption RAW only, got ${String(option)}`);
  };


  const routes: Record<string, Route> = {
    'GET spreadsheets.get': ({ book }) => ({
      spreadsheetId: book.spreadsheetId,
      properties: { title: book.title },
      sheets: [...book.sheets].sort((a, b) => a.index - b.index).map((s) => ({ properties: sheetProperties(s) })),
    }),
    'POST spreadsheets.batchUpdate': ({ book, body }) => ({
      spreadsheetId: book.spreadsheetId,
      replies: applyBatchUpdate(book, body?.requests ?? [], cellLimit, nextId),
    }),
    'GET values.get': ({ book, query, range }) => {
      const { sheet, r } = parseRange(book, range!);
      const out = readRange(sheet, r, query.get('valueRenderOption') === 'UNFORMATTED_VALUE');
      return { range: out.range, majorDimension: 'ROWS', ...(out.values.length ? { values: out.values } : {}) };
    },
    'GET values.batchGet': ({ book, query }) => ({
      spreadsheetId: book.spreadsheetId,
      valueRanges: query.getAll('ranges').map((text) => {
        const { sheet, r } = parseRange(book, text);
        const out = readRange(sheet, r, query.get('valueRenderOption') === 'UNFORMATTED_VALUE');
        return { range: out.range, majorDimension: 'ROWS', ...(out.values.length ? { values: out.values } : {}) };
      }),
    }),
    'PUT values.update': ({ book, query, body, range }) => {
      requireRaw(query.get('valueInputOption'));
      const { sheet, r } = parseRange(book, range!);
      return { spreadsheetId: book.spreadsheetId, ...writeRange(sheet, r, body?.values ?? []) };
    },
    'POST values.append': ({ book, query, body, range }) => {
      requireRaw(query.get('valueInputOption'));
      const { sheet, r } = parseRange(book, range!);
      const out = appendRows(sheet, r, body?.values ?? [], query.get('insertDataOption') === 'INSERT_ROWS', cellLimit - cellCount(book));
      return { spreadsheetId: book.spreadsheetId, ...out };
    },
    'POST values.clear': ({ book, range }) => {
      const { sheet, r } = parseRange(book, range!);
      clearRange(sheet, r);
      return { spreadsheetId: book.spreadsheetId, clearedRange: range };
    },
    'POST values.batchUpdate': ({ book, body }) => {
      requireRaw(body?.valueInputOption);
      // All ranges are checked before any is written: the request succeeds or changes nothing.
      const writes = (body?.data ?? []).map((d: { range: string; values?: unknown[][] }) => ({ ...parseRange(book, d.range), values: d.values ?? [] }));
      for (const w of writes) checkWrite(w.sheet, w.r, w.values);
      const responses = writes.map((w: { sheet: FakeSheet; r: GridRange; values: unknown[][] }) => ({ spreadsheetId: book.spreadsheetId, ...writeRange(w.sheet, w.r, w.values) }));
      return { spreadsheetId: book.spreadsheetId, totalUpdatedCells: responses.reduce((n: number, x: { updatedCells: number }) => n + x.updatedCells, 0), responses };
    },
  };

  const server = createServer((req, res) => void handle(req, res));
  // Idle connections stay open until close(). With Node's 5 s default the server closes an idle one
  // on its own timer, and a client that picked it for its next call just before, on a machine busy
  // enough to delay that call's write, reads ECONNRESET instead of the API's answer.
  server.keepAliveTimeout = 0;

  function route(method: string, pathname: string): { name: string; id: string; range: string | undefined } | undefined {
    const m = /^\/v4\/spreadsheets\/([^/:]+)(?::(batchUpdate))?(?:\/values(?::(batchUpdate|batchGet)|\/([^/:]+)(?::(append|clear))?))?$/.exec(pathname);
    if (!m) return undefined;
    const id = decodeURIComponent(m[1]!);
    if (m[2]) return { name: `${method} spreadsheets.batchUpdate`, id, range: undefined };
    if (m[3]) return { name: `${method} values.${m[3]}`, id, range: undefined };
    if (m[4]) {
      const range = decodeURIComponent(m[4]);
      if (m[5]) return { name: `${method} values.${m[5]}`, id, range };
      return { name: `${method} ${method === 'PUT' ? 'values.update' : 'values.get'}`, id, range };
    }
    return { name: `${method} spreadsheets.get`, id, range: undefined };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const found = route(req.method ?? 'GET', url.pathname);
    const call: FakeCall = { method: found?.name.split(' ')[1] ?? `${req.method} ${url.pathname}`, kind: req.method === 'GET' ? 'read' : 'write', status: 200 };
    calls.push(call);
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      call.status = status;
      res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', ...headers });
      res.end(JSON.stringify(payload));
    };
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const fault = injected.shift();
      if (fault) {
        const status = fault.status === 429 ? 'RESOURCE_EXHAUSTED' : 'UNAVAILABLE';
        send(fault.status, { error: { code: fault.status, message: fault.status === 429 ? "Quota exceeded for quota metric 'Write requests' and limit 'Write requests per minute per user'" : 'The service is currently unavailable.', status } },
          fault.retryAfter ? { 'retry-after': fault.retryAfter } : {});
        return;
      }
      const caller = authenticate(req.headers.authorization, auth);
      const handler = found && routes[found.name];
      if (!found || !handler) throw new ApiError(404, `Method not found: ${req.method} ${url.pathname}`, 'NOT_FOUND');
      const book = books.get(found.id);
      if (!book) throw new ApiError(404, 'Requested entity was not found.', 'NOT_FOUND');
      assertShared(caller, auth);
      const text = Buffer.concat(chunks).toString('utf8');
      const body: unknown = text ? JSON.parse(text) : undefined;
      send(200, handler({ book, query: url.searchParams, body, range: found.range }));
    } catch (error) {
      if (error instanceof ApiError) send(error.code, { error: { code: error.code, message: error.message, status: error.status } });
      else send(500, { error: { code: 500, message: String(error), status: 'INTERNAL' } });
    }
  }

  const bookOf = (id: string): FakeSpreadsheet => {
    const book = books.get(id);
    if (!book) throw new Error(`no fake spreadsheet ${id}`);
    return book;
  };

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    rootUrl: `http://127.0.0.1:${port}/`,
    calls,
    reads: () => calls.filter((c) => c.kind === 'read').length,
    writes: () => calls.filter((c) => c.kind === 'write').length,
    resetCalls: () => void calls.splice(0),
    createSpreadsheet(id, tabs = [{ title: 'Sheet1' }]) {
      const book: FakeSpreadsheet = {
        spreadsheetId: id,
        title: `Spreadsheet ${id}`,
        sheets: tabs.map((t, index) => ({
          sheetId: index === 0 ? 0 : nextId(), title: t.title, index,
          rowCount: t.rowCount ?? Math.max(1000, (t.rows?.length ?? 0)), columnCount: t.columnCount ?? 26,
          rows: (t.rows ?? []).map((row) => [...row]),
        })),
      };
      books.set(id, book);
      return book;
    },
    spreadsheet: (id) => bookOf(id),
    values(id, title) {
      const sheet = findSheet(bookOf(id), title);
      return readRange(sheet, { title, startRow: 0, startCol: 0, endRow: undefined, endCol: undefined }, true).values;
    },
    cells: (id) => cellCount(books.get(id)!),
    failNext(status, opts = {}) {
      for (let i = 0; i < (opts.times ?? 1); i++) injected.push({ status, retryAfter: opts.retryAfter });
    },
    close: () => new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((error) => (error ? reject(error) : resolve()));
    }),
  };
}
