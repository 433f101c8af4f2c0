/**
 * The few Sheets calls the connector makes, each behind the read or write limiter, aborted by the
 * daemon's stop signal, and failing only with a classified BridgeError. Values are always RAW
 * (no formula or number parsing) and read UNFORMATTED (a user's number format cannot change an id).
 */
import type { sheets_v4 } from '@googleapis/sheets';
import type { Clock } from '../../src/clock.js';
import { classifySheetsError } from './errors.js';
import type { Cell } from './columns.js';
import type { Limiter } from './limiter.js';

export interface TabInfo { sheetId: number; title: string; index: number; rowCount: number; columnCount: number }
export interface SpreadsheetMeta { title: string; tabs: TabInfo[] }

export type StructuralRequest = sheets_v4.Schema$Request;

export interface SheetsApi {
  metadata(): Promise<SpreadsheetMeta>;
  batchGet(ranges: string[]): Promise<Cell[][][]>;
  writeRanges(data: { range: string; values: (Cell | null)[][] }[]): Promise<void>;
  append(range: string, values: (Cell | null)[][]): Promise<void>;
  structure(requests: StructuralRequest[]): Promise<sheets_v4.Schema$Response[]>;
}

export interface ApiDeps {
  api: sheets_v4.Sheets;
  spreadsheetId: string;
  email: string | undefined;
  /** Where the API is reached, for messages (sheetsHost). */
  host: string;
  reads: Limiter;
  writes: Limiter;
  clock: Clock;
  signal: AbortSignal;
}

export function toTabs(sheets: sheets_v4.Schema$Sheet[] | undefined): TabInfo[] {
  return (sheets ?? []).map((s) => ({
    sheetId: s.properties?.sheetId ?? 0,
    title: s.properties?.title ?? '',
    index: s.properties?.index ?? 0,
    rowCount: s.properties?.gridProperties?.rowCount ?? 0,
    columnCount: s.properties?.gridProperties?.columnCount ?? 0,
  }));
}

export function createSheetsApi(deps: ApiDeps): SheetsApi {
  const { api, spreadsheetId, signal } = deps;
  const call = async <T>(limiter: Limiter, run: () => Promise<T>): Promise<T> => {
    await limiter.acquire(signal);
    try {
      return await run();
    } catch (error) {
      const failure = classifySheetsError(error, deps.clock.now(), { spreadsheetId, host: deps.host, ...(deps.email ? { email: deps.email } : {}) });
      if (failure.code === 'sheets.rate_limited' && failure.retryAfterMs) limiter.pause(failure.retryAfterMs);
      throw failure;
    }
  };
  return {
    metadata: () => call(deps.reads, async () => {
      const res = await api.spreadsheets.get({
        spreadsheetId,
        fields: 'properties.title,sheets.properties(sheetId,title,index,gridProperties(rowCount,columnCount))',
      }, { signal });
      return { title: res.data.properties?.title ?? '', tabs: toTabs(res.data.sheets) };
    }),
    batchGet: (ranges) => call(deps.reads, async () => {
      const res = await api.spreadsheets.values.batchGet({
        spreadsheetId, ranges, valueRenderOption: 'UNFORMATTED_VALUE', majorDimension: 'ROWS',
      }, { signal });
      return ranges.map((_, i) => (res.data.valueRanges?.[i]?.values ?? []) as Cell[][]);
    }),
    writeRanges: (data) => call(deps.writes, async () => {
      await api.spreadsheets.values.batchUpdate({ spreadsheetId, requestBody: { valueInputOption: 'RAW', data } }, { signal });
    }),
    append: (range, values) => call(deps.writes, async () => {
      // INSERT_ROWS: new rows go in after the table, pushing down (not overwriting) anything below it.
      await api.spreadsheets.values.append({
        spreadsheetId, range, valueInputOption: 'RAW', insertDataOption: 'INSERT_ROWS', requestBody: { values },
      }, { signal });
    }),
    structure: (requests) => call(deps.writes, async () => {
      const res = await api.spreadsheets.batchUpdate({ spreadsheetId, requestBody: { requests } }, { signal });
      return res.data.replies ?? [];
    }),
  };
}
