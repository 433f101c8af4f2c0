/**
 * What one connector instance remembers between deliveries, kept in `ctx.cache` (the connector
 * object itself is stateless): the client, the two limiters, the spreadsheet's tabs and where our
 * columns were last seen. All of it is a hint that each delivery re-checks against the sheet.
 */
import type { ConnectorContext } from '../../src/connectors/types.js';
import { BridgeError } from '../../src/errors.js';
import { CELL_LIMIT, cellVerdict } from './chunks.js';
import { createSheetsApi, type SheetsApi, type SpreadsheetMeta } from './api.js';
import { createSheetsClient, type SheetsClient } from './client.js';
import { createLimiter, type Limiter } from './limiter.js';
import type { GoogleSheetsConfig } from './schema.js';

export interface Session {
  client: SheetsClient;
  reads: Limiter;
  writes: Limiter;
  /** The tabs as last read (grid sizes kept up to date with our own appends and deletes). */
  meta: SpreadsheetMeta | undefined;
  /** Tab title → column index of each of our columns, as found in its header last time. */
  positions: Map<string, number[]>;
  /** generatedAt of the last roster written by this process: an older export must not replace it. */
  lastRosterAt: number;
  /**
   * Problems a person must fix in the sheet (a lost id header), by tab, shown by check() until a
   * write to that tab succeeds: one to another tab says nothing of it.
   */
  problems: Map<string, string>;
  /**
   * The delivery before the next one's turn. Deliveries to a spreadsheet run one at a time: each
   * reads where rows are and then writes by row number, so another one deleting rows in between
   * would shift them under it (an update landing on the wrong student's row).
   */
  turn: Promise<unknown>;
}

const KEY = 'google-sheets:session';

export async function getSession(ctx: ConnectorContext<GoogleSheetsConfig>): Promise<Session> {
  const cached = ctx.cache.get(KEY) as Promise<Session> | undefined;
  if (cached) return cached;
  const config = ctx.config;
  const created = createSheetsClient({
    credentialsFile: config.credentialsFile,
    accessToken: config.accessToken,
    rootUrl: config.rootUrl,
    timeoutMs: config.timeoutMs,
    dispatcher: ctx.dispatcher,
  }).then((client): Session => ({
    client,
    reads: createLimiter(config.readsPerMinute, ctx.clock),
    writes: createLimiter(config.writesPerMinute, ctx.clock),
    meta: undefined,
    positions: new Map(),
    lastRosterAt: Number.NEGATIVE_INFINITY,
    problems: new Map(),
    turn: Promise.resolve(),
  }));
  ctx.cache.set(KEY, created);
  // A bad key file is not cached: the next call reads it again (the operator may have fixed it).
  created.catch(() => ctx.cache.delete(KEY));
  return created;
}

export function sessionApi(session: Session, ctx: ConnectorContext<GoogleSheetsConfig>): SheetsApi {
  return createSheetsApi({
    api: session.client.api,
    spreadsheetId: ctx.config.spreadsheetId,
    email: session.client.email,
    host: sheetsHost(ctx.config),
    reads: session.reads,
    writes: session.writes,
    clock: ctx.clock,
    signal: ctx.signal,
  });
}

/** The host the Sheets API is reached at: rootUrl's, or Google's own. */
export function sheetsHost(config: Pick<GoogleSheetsConfig, 'rootUrl'>): string {
  return new URL(config.rootUrl ?? 'https://sheets.googleapis.com/').host;
}

export async function loadMeta(session: Session, api: SheetsApi, fresh = false): Promise<SpreadsheetMeta> {
  if (!session.meta || fresh) session.meta = await api.metadata();
  return session.meta;
}

export function cellsInUse(meta: SpreadsheetMeta): number {
  return meta.tabs.reduce((sum, t) => sum + t.rowCount * t.columnCount, 0);
}

/**
 * Refuses a write that would take the spreadsheet past Google's cell limit, before Google does and
 * with a clear message. Near the limit the estimate is replaced by a fresh read of the grid sizes.
 */
export async function ensureCellRoom(session: Session, api: SheetsApi, adding: number, spreadsheetId: string): Promise<void> {
  let meta = await loadMeta(session, api);
  if (cellVerdict(cellsInUse(meta), adding) === 'ok') return;
  meta = await loadMeta(session, api, true);
  const inUse = cellsInUse(meta);
  if (cellVerdict(inUse, adding) === 'over') {
    throw new BridgeError('sheets.cell_limit',
      `spreadsheet ${spreadsheetId} would exceed Google's ${CELL_LIMIT.toLocaleString('en')} cell limit (${inUse} in use, ${adding} more needed); move old rows or tabs to another spreadsheet`);
  }
}
