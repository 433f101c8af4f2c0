/**
 * Applies one stream's part of a batch to its tab: at most one read (header + the id, record-id and
 * changed-at columns, in one batchGet) and three writes (one values.batchUpdate for changed rows and
 * header cells, one values.append for new rows, one spreadsheets.batchUpdate of row deletions).
 * A tab is created when missing; a header whose columns moved costs one more read; a header that
 * needs more columns than the grid has costs one resize.
 */
import type { Logger } from 'pino';
import { BridgeError } from '../../src/errors.js';
import { columnRange, headerRange, quoteTab, columnLetter, rowRange } from './a1.js';
import type { SheetsApi, TabInfo } from './api.js';
import { chunkBySize } from './chunks.js';
import type { Cell, ColumnSpec } from './columns.js';
import { placeCells, resolveHeader } from './layout.js';
import { deleteRanges, indexRows, planUpserts, type ExistingRow, type RowIntent } from './plan.js';
import { ensureCellRoom, loadMeta, type Session } from './session.js';

export interface TabJob {
  tab: string;
  columns: readonly ColumnSpec[];
  onDelete: 'remove' | 'mark';
  spreadsheetId: string;
}

interface Env { api: SheetsApi; session: Session; log: Logger }

interface TabState { tab: TabInfo; positions: number[]; headerWrites: { col: number; title: string }[]; existing: Map<string, ExistingRow> }

const NEW_TAB_ROWS = 1000;
const bookkeeping = (columns: readonly ColumnSpec[]) => ['key', 'recordId', 'changedAt'].map((name) =>
  columns.findIndex((c) => (name === 'key' ? c.source.kind === 'key' : c.source.kind === 'meta' && c.source.name === name)));

async function createTab(env: Env, job: TabJob): Promise<TabState> {
  // A tab this process wrote before is gone (renamed or deleted by hand): its rows are not in the new one.
  if (env.session.positions.has(job.tab)) {
    env.log.warn({ tab: job.tab }, `tab "${job.tab}" was gone (renamed or deleted in the sheet?): making it anew, without the rows delivered to it before; for students or users, schoolbridge resync fills it again`);
  }
  await ensureCellRoom(env.session, env.api, NEW_TAB_ROWS * job.columns.length, job.spreadsheetId);
  const [reply] = await env.api.structure([{ addSheet: { properties: { title: job.tab, gridProperties: { rowCount: NEW_TAB_ROWS, columnCount: job.columns.length } } } }]);
  const p = reply?.addSheet?.properties;
  const tab: TabInfo = { sheetId: p?.sheetId ?? 0, title: job.tab, index: p?.index ?? 0, rowCount: NEW_TAB_ROWS, columnCount: job.columns.length };
  env.session.meta?.tabs.push(tab);
  const positions = job.columns.map((_, i) => i);
  return { tab, positions, headerWrites: job.columns.map((c, col) => ({ col, title: c.title })), existing: new Map() };
}

async function readTab(env: Env, job: TabJob, tab: TabInfo): Promise<TabState> {
  const wanted = bookkeeping(job.columns);
  const guess = env.session.positions.get(tab.title) ?? job.columns.map((_, i) => i);
  const readable = (cols: number[]) => cols.filter((c) => c < tab.columnCount);
  let cols = wanted.map((i) => guess[i]!);
  const [header = [], ...first] = await env.api.batchGet([headerRange(tab.title), ...readable(cols).map((c) => columnRange(tab.title, c))]);
  const resolved = resolveHeader(header[0] ?? [], job.columns.map((c) => c.title));
  if (!resolved.ok) throw new BridgeError('sheets.header', `tab "${tab.title}": ${resolved.reason}`, { retryable: true });
  const actual = wanted.map((i) => resolved.positions[i]!);
  let data = first;
  if (actual.some((c, i) => c !== cols[i])) {
    env.log.info({ tab: tab.title }, 'columns moved since the last delivery; reading them again');
    cols = actual;
    data = readable(cols).length > 0 ? await env.api.batchGet(readable(cols).map((c) => columnRange(tab.title, c))) : [];
  }
  // A column beyond the grid is a title we are about to add: it holds nothing yet.
  const byCol = (c: number): Cell[][] => (c < tab.columnCount ? data[readable(cols).indexOf(c)] ?? [] : []);
  const existing = indexRows(byCol(cols[0]!), byCol(cols[1]!), byCol(cols[2]!));
  return { tab, positions: resolved.positions, headerWrites: resolved.writes, existing };
}

const rangeBytes = (d: { range: string; values: unknown[][] }) => d.range.length + JSON.stringify(d.values).length + 32;

export async function upsertTab(env: Env, job: TabJob, intents: readonly RowIntent[]): Promise<void> {
  const meta = await loadMeta(env.session, env.api);
  const known = meta.tabs.find((t) => t.title === job.tab);
  const state = known ? await readTab(env, job, known) : await createTab(env, job);
  const { tab, positions } = state;
  const plan = planUpserts(intents, state.existing, job.onDelete);
  const width = Math.max(...positions) + 1;
  const lastCol = width - 1;
  await ensureCellRoom(env.session, env.api, plan.appends.length * tab.columnCount, job.spreadsheetId);
  if (width > tab.columnCount) {
    await env.api.structure([{ updateSheetProperties: { properties: { sheetId: tab.sheetId, gridProperties: { columnCount: width } }, fields: 'gridProperties.columnCount' } }]);
    tab.columnCount = width;
  }
  const data: { range: string; values: (Cell | null)[][] }[] = [];
  if (state.headerWrites.length > 0) {
    const header: (Cell | null)[] = new Array<Cell | null>(width).fill(null);
    for (const w of state.headerWrites) header[w.col] = w.title;
    data.push({ range: rowRange(tab.title, 0, lastCol), values: [header] });
  }
  for (const update of plan.updates) data.push({ range: rowRange(tab.title, update.row, lastCol), values: [placeCells(update.cells, positions)] });
  for (const chunk of chunkBySize(data, rangeBytes)) await env.api.writeRanges(chunk);
  const appends = plan.appends.map((cells) => placeCells(cells, positions));
  for (const chunk of chunkBySize(appends, (row) => JSON.stringify(row).length + 1)) {
    await env.api.append(`${quoteTab(tab.title)}!A:${columnLetter(lastCol)}`, chunk);
    tab.rowCount += chunk.length;
  }
  if (plan.copies > 0) {
    env.log.warn({ tab: tab.title, rows: plan.copies }, `tab "${tab.title}": removing ${plan.copies} duplicate row(s) of an id, older than the row kept (a write that timed out here can still land at Google)`);
  }
  if (plan.deleteRows.length > 0) {
    await env.api.structure(deleteRanges(plan.deleteRows).map((r) => ({
      deleteDimension: { range: { sheetId: tab.sheetId, dimension: 'ROWS', startIndex: r.start, endIndex: r.end } },
    })));
    tab.rowCount -= plan.deleteRows.length;
  }
  env.session.positions.set(tab.title, positions);
}
