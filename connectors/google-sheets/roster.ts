/**
 * The roster replaces its tab atomically: the rows are written to a fresh hidden tab, then one
 * spreadsheets.batchUpdate deletes the old tab and renames the new one into its place, so a reader
 * sees the old roster or the new one, never half of one. Calls: one read of the tabs, one addSheet
 * (which also removes a leftover from an interrupted export), one write per chunk, one swap.
 */
import type { Logger } from 'pino';
import type { RosterRecord } from '../../src/records.js';
import { blockRange } from './a1.js';
import type { SheetsApi, StructuralRequest } from './api.js';
import { chunkRows } from './chunks.js';
import { toCell, type Cell, type RosterColumn } from './columns.js';
import { ensureCellRoom, loadMeta, type Session } from './session.js';

export interface RosterJob {
  tab: string;
  columns: readonly RosterColumn[];
  chunkCells: number;
  spreadsheetId: string;
}

interface Env { api: SheetsApi; session: Session; log: Logger }

export function rosterValues(record: RosterRecord, columns: readonly RosterColumn[]): Cell[][] {
  const rows: Cell[][] = [columns.map((c) => c.title)];
  for (const row of record.rows) rows.push(columns.map((c) => toCell((row as unknown as Record<string, unknown>)[c.path])));
  return rows;
}

export const stagingTitle = (tab: string) => `${tab} (updating)`;

export async function exportRoster(env: Env, job: RosterJob, record: RosterRecord): Promise<void> {
  const meta = await loadMeta(env.session, env.api, true);
  const old = meta.tabs.find((t) => t.title === job.tab);
  const staging = stagingTitle(job.tab);
  const leftovers = meta.tabs.filter((t) => t.title === staging);
  const values = rosterValues(record, job.columns);
  const width = job.columns.length;
  const freed = leftovers.reduce((n, t) => n + t.rowCount * t.columnCount, 0);
  await ensureCellRoom(env.session, env.api, values.length * width - freed, job.spreadsheetId);

  const add: StructuralRequest[] = [
    ...leftovers.map((t) => ({ deleteSheet: { sheetId: t.sheetId } })),
    { addSheet: { properties: { title: staging, hidden: true, gridProperties: { rowCount: values.length, columnCount: width } } } },
  ];
  const replies = await env.api.structure(add);
  const sheetId = replies[replies.length - 1]?.addSheet?.properties?.sheetId ?? 0;

  for (const block of chunkRows(values, job.chunkCells)) {
    const range = blockRange(staging, block.start, block.start + block.rows.length - 1, width - 1);
    await env.api.writeRanges([{ range, values: block.rows as Cell[][] }]);
  }

  const swap: StructuralRequest[] = [
    ...(old ? [{ deleteSheet: { sheetId: old.sheetId } }] : []),
    {
      updateSheetProperties: {
        properties: { sheetId, title: job.tab, hidden: false, ...(old ? { index: old.index } : {}) },
        fields: old ? 'title,hidden,index' : 'title,hidden',
      },
    },
  ];
  await env.api.structure(swap);
  // Keep the cached tab list true to the swap (indexes aside, which only the roster uses, fresh).
  const kept = meta.tabs.filter((t) => t !== old && !leftovers.includes(t));
  kept.push({ sheetId, title: job.tab, index: old?.index ?? kept.length, rowCount: values.length, columnCount: width });
  if (env.session.meta === meta) meta.tabs = kept;
  env.log.info({ tab: job.tab, rows: record.rows.length }, 'roster tab replaced');
}
