import { appendFile, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BOM, MACHINE_CSV, PEOPLE_CSV } from '../../src/csv.js';
import { buildFeedBody } from './feed.js';
import { createLedger } from './ledger.js';
import { LEDGER_COLUMNS, LEDGER_LABELS } from './ledger-row.js';
import { invoiceRecord } from './test-builders.js';

const log = pino({ level: 'silent' });
const ZONE = 'Europe/Warsaw';
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ledger-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const body = (id: string, receivedAt = '2026-11-22T10:00:00.000Z', invoice: Record<string, unknown> = {}) =>
  buildFeedBody(invoiceRecord({ id, receivedAt }, invoice), ZONE, { userId: 7, firstName: 'Anna', lastName: 'Kowalska', email: 'anna@example.pl', billingName: null });
/** What `append` takes: a feed body and its invoice's text. */
const entry = (...args: Parameters<typeof body>) => {
  const feed = body(...args);
  return [feed, JSON.stringify(feed.invoice)] as const;
};

const readRows = async (name: string): Promise<Record<string, string>[]> =>
  parse(await readFile(join(dir, name), 'utf8'), { columns: true, bom: true });

describe('ledger', () => {
  it('writes a header and one row per record id, dated in the school timezone', async () => {
    const ledger = createLedger({ dir, timeZone: ZONE, log, format: MACHINE_CSV });
    expect(await ledger.append(...entry('a'))).toBe('written');
    expect(await ledger.append(...entry('b', '2026-11-22T23:30:00.000Z'))).toBe('written');
    expect(await ledger.append(...entry('a'))).toBe('already');
    expect((await readdir(dir)).sort()).toEqual(['ledger-2026-11-22.csv', 'ledger-2026-11-23.csv']);
    const text = await readFile(join(dir, 'ledger-2026-11-22.csv'), 'utf8');
    expect(text.split('\r\n')[0]).toBe(LEDGER_COLUMNS.join(','));
    expect((await readRows('ledger-2026-11-22.csv')).map((row) => row.recordId)).toEqual(['a']);
  });

  it('a new ledger over the same files (a restart) knows what was written', async () => {
    await createLedger({ dir, timeZone: ZONE, log, format: MACHINE_CSV }).append(...entry('a'));
    const restarted = createLedger({ dir, timeZone: ZONE, log, format: MACHINE_CSV });
    expect(await restarted.append(...entry('a'))).toBe('already');
    expect(await restarted.append(...entry('b'))).toBe('written');
    expect((await readRows('ledger-2026-11-22.csv')).map((row) => row.recordId)).toEqual(['a', 'b']);
  });

  it('cuts a row torn by a crash, then writes that record whole', async () => {
    await createLedger({ dir, timeZone: ZONE, log, format: MACHINE_CSV }).append(...entry('a'));
    const file = join(dir, 'ledger-2026-11-22.csv');
    await appendFile(file, '"b","invoice.created","Zaż'); // a crash mid-append, inside a multibyte character too
    await appendFile(file, Buffer.from([0xc5]));
    const restarted = createLedger({ dir, timeZone: ZONE, log, format: MACHINE_CSV });
    expect([...(await restarted.ids())]).toEqual(['a']);
    expect(await restarted.append(...entry('b'))).toBe('written');
    expect((await readRows('ledger-2026-11-22.csv')).map((row) => row.recordId)).toEqual(['a', 'b']);
  });

  it('a file with only a torn header starts again with a header', async () => {
    await writeFile(join(dir, 'ledger-2026-11-22.csv'), 'recordId,eve');
    const ledger = createLedger({ dir, timeZone: ZONE, log, format: MACHINE_CSV });
    await ledger.append(...entry('a'));
    expect((await readRows('ledger-2026-11-22.csv')).map((row) => row.recordId)).toEqual(['a']);
  });

  it('keeps commas, quotes, newlines and Polish diacritics intact for a standard CSV parser', async () => {
    const description = 'Kurs "Angielski", grupa B1\r\nZażółć gęślą jaźń; ŁÓDŹ\nkoniec,';
    const ledger = createLedger({ dir, timeZone: ZONE, log, format: MACHINE_CSV });
    await ledger.append(...entry('a', undefined, { description, place: 'Kraków, ul. "Długa" 5 ' }));
    const [row] = await readRows('ledger-2026-11-22.csv');
    expect(row?.description).toBe(description);
    expect(JSON.parse(row!.invoice!)).toMatchObject({ description, place: 'Kraków, ul. "Długa" 5 ' });
    expect(row).toMatchObject({ recordId: 'a', isPaid: 'true', receivedAt: '2026-11-22T11:00:00+01:00', date: '2026-11-22T11:00:00+01:00' });
  });

  it('appends arriving together run one at a time: each id once', async () => {
    const ledger = createLedger({ dir, timeZone: ZONE, log, format: MACHINE_CSV });
    const ids = Array.from({ length: 20 }, (_, i) => `r${i % 10}`);
    await Promise.all(ids.map((id) => ledger.append(...entry(id))));
    const rows = await readRows('ledger-2026-11-22.csv');
    expect(rows.map((row) => row.recordId).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `r${i}`).sort());
  });

  it('ignores files that are not ledger files', async () => {
    await writeFile(join(dir, 'notes.csv'), 'recordId\r\nx\r\n');
    expect((await createLedger({ dir, timeZone: ZONE, log, format: MACHINE_CSV }).ids()).size).toBe(0);
  });

  it('a ledger it cannot use is an error with a stable code, and the next append tries the files again', async () => {
    const blocked = join(dir, 'file-in-the-way');
    await writeFile(blocked, 'x');
    const ledger = createLedger({ dir: join(blocked, 'ledger'), timeZone: ZONE, log, format: MACHINE_CSV });
    await expect(ledger.append(...entry('a'))).rejects.toMatchObject({ code: 'accounting.ledger_read', retryable: true });
    await rm(blocked);
    expect(await ledger.append(...entry('a'))).toBe('written');
  });

  it('a failed append is accounting.ledger_write, and nothing counts as written', async () => {
    const ledger = createLedger({ dir, timeZone: ZONE, log, format: MACHINE_CSV });
    await ledger.ids();
    await rm(dir, { recursive: true });
    await expect(ledger.append(...entry('a'))).rejects.toMatchObject({ code: 'accounting.ledger_write', retryable: true });
    expect(await ledger.append(...entry('a'))).toBe('written');
  });

  it('for people: a byte order mark, labels, ";", neutralized formulas; read back after a restart', async () => {
    const ledger = createLedger({ dir, timeZone: ZONE, log, format: PEOPLE_CSV });
    await ledger.append(...entry('a', undefined, { description: '=HYPERLINK("http://x")' }));
    const text = await readFile(join(dir, 'ledger-2026-11-22.csv'), 'utf8');
    expect(text.startsWith(`${BOM}Record ID;Event;`)).toBe(true);
    const [row] = parse(text, { columns: true, bom: true, delimiter: ';' }) as Record<string, string>[];
    expect(row).toMatchObject({ [LEDGER_LABELS.recordId]: 'a', [LEDGER_LABELS.description]: '\'=HYPERLINK("http://x")', [LEDGER_LABELS.buyer]: 'Anna Kowalska' });
    const restarted = createLedger({ dir, timeZone: ZONE, log, format: PEOPLE_CSV });
    expect([...(await restarted.ids())]).toEqual(['a']);
  });

  it('a file keeps the separator it was started with when the format changes', async () => {
    await createLedger({ dir, timeZone: ZONE, log, format: MACHINE_CSV }).append(...entry('a'));
    const changed = createLedger({ dir, timeZone: ZONE, log, format: PEOPLE_CSV });
    expect(await changed.append(...entry('b'))).toBe('written');
    expect(await changed.append(...entry('c', '2026-11-23T10:00:00.000Z'))).toBe('written');
    expect((await readRows('ledger-2026-11-22.csv')).map((row) => row.recordId)).toEqual(['a', 'b']);
    expect((await readFile(join(dir, 'ledger-2026-11-23.csv'), 'utf8')).startsWith(`${BOM}Record ID;`)).toBe(true);
    expect([...(await createLedger({ dir, timeZone: ZONE, log, format: PEOPLE_CSV }).ids())].sort()).toEqual(['a', 'b', 'c']);
  });

  it('names the buyer in its last column', async () => {
    await createLedger({ dir, timeZone: ZONE, log, format: MACHINE_CSV }).append(...entry('a'));
    const [row] = await readRows('ledger-2026-11-22.csv');
    expect(LEDGER_COLUMNS.at(-1)).toBe('buyer');
    expect(row?.buyer).toBe('Anna Kowalska');
  });
});
