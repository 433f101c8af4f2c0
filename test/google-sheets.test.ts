/**
 * The Google Sheets connector through the real @googleapis/sheets client against the fake Sheets API:
 * create / update / delete, idempotent re-apply, a hand-edited header, 429 then success, roster swap.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { googleSheetsConnector } from '../connectors/google-sheets/index.js';
import { deliver } from './fake-sheets/deliver.js';
import { startFakeSheets, type FakeSheets } from './fake-sheets/index.js';
import { change, invoiceEvent, roster, sheetsContext, student } from './fake-sheets/context.js';

const ID = 'sheet-1';
let fake: FakeSheets;
const closers: (() => Promise<void>)[] = [];

beforeEach(async () => {
  fake = await startFakeSheets({ tokens: ['good-token'] });
  fake.createSpreadsheet(ID, [{ title: 'Notes', rows: [['keep me']] }]);
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  await fake.close();
});

function connect(extra: Record<string, unknown> = {}) {
  const { ctx, close } = sheetsContext({ spreadsheetId: ID, accessToken: 'good-token', rootUrl: fake.rootUrl, ...extra });
  closers.push(close);
  return ctx;
}

const column = (title: string) => {
  const rows = fake.values(ID, 'Students');
  const col = rows[0]!.indexOf(title);
  return rows.slice(1).map((r) => r[col]);
};

describe('google-sheets connector', () => {
  it('creates the tab with a header, writes RAW values and leaves out personal ids and billing data', async () => {
    const ctx = connect();
    const out = await deliver(ctx, [change(1, 'created', student(1)), change(2, 'created', student(2))]);
    expect(out).toEqual([{ status: 'done' }, { status: 'done' }]);
    const rows = fake.values(ID, 'Students');
    expect(rows[0]).toContain('First name');
    expect(rows[0]!.slice(-2)).toEqual(['changed at', 'record id']);
    expect(JSON.stringify(rows)).not.toMatch(/90010112345|pesel|billing/i);
    expect(column('id')).toEqual([1, 2]);
    expect(column('Phone')).toEqual(['00123', '00123']);
    expect(column('Zip code')).toEqual(['01-123 ', '01-123 ']);
    expect(fake.values(ID, 'Notes')).toEqual([['keep me']]);
  });

  it('updates rows in place, deletes removed rows, and a re-applied batch changes nothing', async () => {
    const ctx = connect();
    await deliver(ctx, [1, 2, 3, 4].map((k) => change(k, 'created', student(k))));
    const batch = [change(2, 'updated', student(2, 'Beata')), change(3, 'deleted', null), change(5, 'created', student(5))];
    expect(await deliver(ctx, batch)).toEqual(batch.map(() => ({ status: 'done' })));
    const after = fake.values(ID, 'Students');
    expect(column('id')).toEqual([1, 2, 4, 5]);
    expect(column('First name')).toEqual(['Ann1', 'Beata', 'Ann4', 'Ann5']);
    fake.resetCalls();
    expect(await deliver(ctx, batch)).toEqual(batch.map(() => ({ status: 'done' })));
    expect(fake.values(ID, 'Students')).toEqual(after);
    expect(fake.writes()).toBe(0);
  });

  it('deliveries running at once cannot write to rows another one is deleting', async () => {
    const ctx = connect();
    await deliver(ctx, [1, 2, 3, 4].map((k) => change(k, 'created', student(k))));
    // As the outbox would with delivery.concurrency > 1: a deletion above row 4 and an update of row 4.
    const [removed, updated] = await Promise.all([
      deliver(ctx, [change(1, 'deleted', null)]),
      deliver(ctx, [change(3, 'updated', student(3, 'Celina'))]),
    ]);
    expect([removed, updated]).toEqual([[{ status: 'done' }], [{ status: 'done' }]]);
    expect(column('id')).toEqual([2, 3, 4]);
    expect(column('First name')).toEqual(['Ann2', 'Celina', 'Ann4']);
  });

  it('does not let an older change that is retried late undo a newer one', async () => {
    const ctx = connect();
    const older = change(1, 'updated', student(1, 'Old'), '2026-02-01T00:00:00.000Z');
    const newer = change(1, 'updated', student(1, 'New'), '2026-02-02T00:00:00.000Z');
    await deliver(ctx, [newer]);
    expect(await deliver(ctx, [older])).toEqual([{ status: 'done' }]);
    expect(column('First name')).toEqual(['New']);
  });

  it('marks deleted rows instead of removing them with onDelete: mark', async () => {
    const ctx = connect({ onDelete: 'mark' });
    await deliver(ctx, [change(1, 'created', student(1)), change(2, 'created', student(2))]);
    await deliver(ctx, [change(1, 'deleted', null)]);
    expect(column('id')).toEqual([1, 2]);
    expect(column('status')).toEqual(['deleted', 'active']);
    expect(column('First name')).toEqual(['Ann1', 'Ann2']);
  });

  it('follows columns a user reordered, keeps a user column and re-adds a renamed title without corrupting rows', async () => {
    const ctx = connect();
    await deliver(ctx, [change(1, 'created', student(1)), change(2, 'created', student(2))]);
    // The user moves "Last name" to the front, renames "City" and adds a notes column at the end.
    const sheet = fake.spreadsheet(ID).sheets.find((s) => s.title === 'Students')!;
    const header = sheet.rows[0]!;
    const last = header.indexOf('Last name');
    for (const row of sheet.rows) row.unshift(...row.splice(last, 1));
    header[header.indexOf('City')] = 'Town';
    sheet.columnCount += 1; // as the user does in the UI before typing in a new column
    header[header.length] = 'Notes';
    sheet.rows[1]![header.length - 1] = 'pays late';
    const before = fake.values(ID, 'Students');

    await deliver(ctx, [change(2, 'updated', student(2, 'Beata')), change(3, 'created', student(3))]);
    const rows = fake.values(ID, 'Students');
    expect(rows[0]!.slice(0, before[0]!.length)).toEqual(before[0]);
    expect(rows[0]!.at(-1)).toBe('City');
    expect(column('Last name')).toEqual(['Nowak', 'Nowak', 'Nowak']);
    expect(column('First name')).toEqual(['Ann1', 'Beata', 'Ann3']);
    expect(column('Notes')).toEqual(['pays late', undefined, undefined]);
    expect(column('Town')).toEqual(['Warszawa', 'Warszawa', undefined]);
    expect(column('City')).toEqual([undefined, 'Warszawa', 'Warszawa']);
  });

  it('makes a tab deleted by hand anew, and warns that the rows delivered to it before are not in it', async () => {
    const warnings: string[] = [];
    const ctx = { ...connect(), log: pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line).msg) }) };
    await deliver(ctx, [change(1, 'created', student(1)), change(2, 'created', student(2))]);
    const book = fake.spreadsheet(ID);
    book.sheets = book.sheets.filter((tab) => tab.title !== 'Students');
    // The tab it knew is gone: one delivery learns so (retried), the next makes it anew.
    expect((await deliver(ctx, [change(3, 'created', student(3))]))[0]).toMatchObject({ status: 'retry' });
    expect(await deliver(ctx, [change(3, 'created', student(3))])).toEqual([{ status: 'done' }]);
    expect(column('id')).toEqual([3]);
    expect(warnings).toContain('tab "Students" was gone (renamed or deleted in the sheet?): making it anew, without the rows delivered to it before; for students or users, schoolbridge resync fills it again');
  });

  it('removes a row that a write which timed out left twice, keeping the one of the newest change', async () => {
    const warnings: string[] = [];
    const ctx = { ...connect(), log: pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line).msg) }) };
    await deliver(ctx, [change(1, 'created', student(1)), change(2, 'created', student(2))]);
    // The append was retried after a timeout, and the first try still landed: student 1's row twice.
    const tab = fake.spreadsheet(ID).sheets.find((t) => t.title === 'Students')!;
    tab.rows.push([...tab.rows[1]!]);
    expect(column('id')).toEqual([1, 2, 1]);
    expect(await deliver(ctx, [change(2, 'updated', student(2, 'Beata'))])).toEqual([{ status: 'done' }]);
    expect(column('id')).toEqual([1, 2]);
    expect(column('First name')).toEqual(['Ann1', 'Beata']);
    expect(warnings).toContain('tab "Students": removing 1 duplicate row(s) of an id, older than the row kept (a write that timed out here can still land at Google)');
  });

  it('stops with a clear retryable reason when the id header is gone, instead of duplicating rows', async () => {
    const ctx = connect();
    await deliver(ctx, [change(1, 'created', student(1))]);
    fake.spreadsheet(ID).sheets.find((s) => s.title === 'Students')!.rows[0]![0] = 'Student';
    const [out] = await deliver(ctx, [change(2, 'created', student(2))]);
    expect(out).toMatchObject({ status: 'retry', error: { code: 'sheets.header' } });
    expect(await googleSheetsConnector.check(ctx)).toMatchObject({ ok: false, reason: expect.stringContaining('"id"') });
    expect(fake.values(ID, 'Students')).toHaveLength(2);
    // A write to another tab says nothing of this one: the check still fails until Students takes one.
    expect(await deliver(ctx, [invoiceEvent(9)])).toEqual([{ status: 'done' }]);
    expect(await googleSheetsConnector.check(ctx)).toMatchObject({ ok: false, reason: expect.stringContaining('"id"') });
    fake.spreadsheet(ID).sheets.find((s) => s.title === 'Students')!.rows[0]![0] = 'id';
    expect(await deliver(ctx, [change(2, 'created', student(2))])).toEqual([{ status: 'done' }]);
    expect(await googleSheetsConnector.check(ctx)).toEqual({ ok: true });
  });

  it('turns a 429 into a retry with the server back-off, then succeeds', async () => {
    const ctx = connect();
    fake.failNext(429, { retryAfter: '7' });
    const first = await deliver(ctx, [change(1, 'created', student(1))]);
    expect(first).toEqual([{ status: 'retry', retryAfterMs: 7000, error: expect.objectContaining({ code: 'sheets.rate_limited' }) }]);
    // The limiter is paused by the 429; a new session (as after the back-off) goes straight through.
    ctx.cache.clear();
    expect(await deliver(ctx, [change(1, 'created', student(1))])).toEqual([{ status: 'done' }]);
    expect(column('id')).toEqual([1]);
  });

  it('makes a 5xx retryable and a missing spreadsheet dead', async () => {
    const ctx = connect();
    fake.failNext(503);
    expect((await deliver(ctx, [change(1, 'created', student(1))]))[0]).toMatchObject({ status: 'retry', error: { code: 'sheets.unavailable' } });
    const missing = connect({ spreadsheetId: 'nope' });
    expect((await deliver(missing, [change(1, 'created', student(1))]))[0]).toMatchObject({ status: 'dead', error: { code: 'sheets.not_found' } });
  });

  it('upserts invoices by invoice id and appends events by record id, keeping formulas as text', async () => {
    const ctx = connect();
    const created = invoiceEvent(9);
    const paid = invoiceEvent(9, 'invoice.updated', { statusOfficeName: 'paid' });
    await deliver(ctx, [created, { ...created, id: 'events:1', stream: 'events' }]);
    await deliver(ctx, [paid, { ...paid, id: 'events:2', stream: 'events' }]);
    const invoices = fake.values(ID, 'Invoices');
    expect(invoices).toHaveLength(2);
    expect(invoices[1]).toContain('paid');
    expect(invoices[1]).toContain('invoice.updated');
    const events = fake.values(ID, 'Events');
    expect(events.slice(1).map((r) => r[0])).toEqual(['events:1', 'events:2']);
    expect(String(events[1]![1])).toContain('=HYPERLINK');
  });

  it('replaces the roster tab in one swap and removes a leftover from an interrupted export', async () => {
    const ctx = connect();
    await deliver(ctx, [roster(3, '2026-01-01T02:00:00.000Z')]);
    expect(fake.values(ID, 'Roster')).toHaveLength(4);
    const book = fake.spreadsheet(ID);
    book.sheets.push({ sheetId: 999, title: 'Roster (updating)', index: book.sheets.length, rowCount: 5, columnCount: 5, rows: [['half']] });
    const out = await deliver(ctx, [roster(5, '2026-01-02T02:00:00.000Z'), roster(2, '2026-01-01T03:00:00.000Z')]);
    expect(out).toEqual([{ status: 'done' }, { status: 'done' }]);
    const rows = fake.values(ID, 'Roster');
    expect(rows).toHaveLength(6);
    expect(rows[0]![0]).toBe('studentId');
    expect(rows[1]![7]).toBe('00123');
    expect(fake.spreadsheet(ID).sheets.map((s) => s.title).sort()).toEqual(['Notes', 'Roster']);
  });

  it('reports a missing spreadsheet and a bad token in check()', async () => {
    expect(await googleSheetsConnector.check(connect())).toEqual({ ok: true });
    expect(await googleSheetsConnector.check(connect({ spreadsheetId: 'other' }))).toMatchObject({ ok: false, reason: expect.stringContaining('not found') });
    expect(await googleSheetsConnector.check(connect({ accessToken: 'bad' }))).toMatchObject({ ok: false, reason: expect.stringContaining('sheets.unauthenticated') });
  });
});
