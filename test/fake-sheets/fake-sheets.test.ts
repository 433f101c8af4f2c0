/** The fake Sheets API itself, through the real client: the behaviours the connector relies on. */
import { auth as googleAuth, sheets } from '@googleapis/sheets';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeSheets, type FakeSheets } from './index.js';

let fake: FakeSheets;
let api: ReturnType<typeof sheets>;
beforeEach(async () => {
  fake = await startFakeSheets({ tokens: ['t'] });
  fake.createSpreadsheet('s', [{ title: 'A', rows: [['id', 'x'], [1, 'a'], [2, 'b']], rowCount: 3, columnCount: 2 }, { title: 'B' }]);
  const client = new googleAuth.OAuth2();
  client.setCredentials({ access_token: 't' });
  api = sheets({ version: 'v4', auth: client, rootUrl: fake.rootUrl, retry: false });
});
afterEach(() => fake.close());

describe('fake sheets', () => {
  it('skips null cells, clears "" cells and keeps RAW text', async () => {
    await api.spreadsheets.values.batchUpdate({ spreadsheetId: 's', requestBody: { valueInputOption: 'RAW', data: [{ range: "'A'!A2:B2", values: [[null, '']] }, { range: "'A'!A3:B3", values: [['007', '=1']] }] } });
    expect(fake.values('s', 'A')).toEqual([['id', 'x'], [1], ['007', '=1']]);
  });

  it('requires valueInputOption and rejects writes beyond the grid without changing anything', async () => {
    await expect(api.spreadsheets.values.update({ spreadsheetId: 's', range: "'A'!A1", requestBody: { values: [['z']] } })).rejects.toMatchObject({ status: 400 });
    await expect(api.spreadsheets.values.batchUpdate({ spreadsheetId: 's', requestBody: { valueInputOption: 'RAW', data: [{ range: "'A'!A1", values: [['z']] }, { range: "'A'!A9", values: [['z']] }] } })).rejects.toMatchObject({ status: 400 });
    expect(fake.values('s', 'A')[0]).toEqual(['id', 'x']);
  });

  it('appends after the table, growing the grid', async () => {
    await api.spreadsheets.values.append({ spreadsheetId: 's', range: "'A'!A:B", valueInputOption: 'RAW', insertDataOption: 'INSERT_ROWS', requestBody: { values: [[3, 'c'], [4, 'd']] } });
    expect(fake.values('s', 'A').map((r) => r[0])).toEqual(['id', 1, 2, 3, 4]);
    expect(fake.spreadsheet('s').sheets[0]!.rowCount).toBe(5);
  });

  it('applies spreadsheets.batchUpdate atomically', async () => {
    const sheetB = fake.spreadsheet('s').sheets[1]!.sheetId;
    await expect(api.spreadsheets.batchUpdate({ spreadsheetId: 's', requestBody: { requests: [{ deleteSheet: { sheetId: sheetB } }, { deleteDimension: { range: { sheetId: 0, dimension: 'ROWS', startIndex: 1, endIndex: 99 } } }] } })).rejects.toMatchObject({ status: 400 });
    expect(fake.spreadsheet('s').sheets.map((s) => s.title)).toEqual(['A', 'B']);
    await api.spreadsheets.batchUpdate({ spreadsheetId: 's', requestBody: { requests: [{ deleteDimension: { range: { sheetId: 0, dimension: 'ROWS', startIndex: 1, endIndex: 2 } } }, { updateSheetProperties: { properties: { sheetId: sheetB, title: 'C', index: 0 }, fields: 'title,index' } }] } });
    expect(fake.values('s', 'A')).toEqual([['id', 'x'], [2, 'b']]);
    expect(fake.spreadsheet('s').sheets.map((s) => s.title)).toEqual(['C', 'A']);
  });

  it('checks the bearer token, counts requests and injects faults', async () => {
    const anonymous = sheets({ version: 'v4', rootUrl: fake.rootUrl, retry: false });
    await expect(anonymous.spreadsheets.get({ spreadsheetId: 's' })).rejects.toMatchObject({ status: 401 });
    fake.failNext(429, { retryAfter: '3' });
    await expect(api.spreadsheets.get({ spreadsheetId: 's' })).rejects.toMatchObject({ status: 429 });
    await api.spreadsheets.values.batchGet({ spreadsheetId: 's', ranges: ["'A'!1:1", "'A'!B:B"] });
    expect(fake.calls.map((c) => [c.method, c.status])).toEqual([['spreadsheets.get', 401], ['spreadsheets.get', 429], ['values.batchGet', 200]]);
    expect(fake.reads()).toBe(3);
  });
});
