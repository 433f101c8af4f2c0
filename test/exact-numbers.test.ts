import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { accountingConnector } from '../connectors/accounting/index.js';
import { accountingConfigSchema } from '../connectors/accounting/schema.js';
import { fileConnector } from '../connectors/file/index.js';
import { fileConfigSchema } from '../connectors/file/schema.js';
import { googleSheetsConnector } from '../connectors/google-sheets/index.js';
import { webhookConnector } from '../connectors/webhook/index.js';
import { webhookConfigSchema } from '../connectors/webhook/schema.js';
import { createApp, type App } from '../src/app.js';
import { systemClock } from '../src/clock.js';
import { releaseCache } from '../src/connectors/cache.js';
import { StoredRecord } from '../src/connectors/stored-record.js';
import type { ConnectorContext } from '../src/connectors/types.js';
import { numberLiteral } from '../src/json/test-arbitraries.js';
import { createMetricsRegistry } from '../src/metrics.js';
import { signatureHeader } from '../src/signature/index.js';
import { eventRecordJson, eventRecords, identifyEvent } from '../src/webhooks/event-identity.js';
import { readBody } from './support/webhooks.js';
import { startAccountingReceiver, type AccountingReceiver } from './accounting-receiver.js';
import { sheetsContext } from './fake-sheets/context.js';
import { startFakeSheets, type FakeSheets } from './fake-sheets/index.js';
import { quietConfig } from './support/quiet-daemon.js';
import { ENGINES, testStore } from './support/stores.js';
import { tempDir } from './support/temp.js';

/** The ledger for an import program: what it receives is compared literally, so no people's format. */
const MACHINE_LEDGER = { bom: false, separator: ',', header: 'keys', formulas: 'keep' } as const;

/**
 * Numbers pass on as the upstream wrote them: an invoice id beyond 2^53, `123.4500` and `1e2` reach
 * every connector (file, webhook, accounting with its ledger, Google Sheets) with the same literal,
 * and two invoices whose ids a double cannot tell apart stay two invoices.
 */
const log = pino({ level: 'silent' });
const SECRET = 'exact-secret';
const SHEET = 'sheet-exact';
const BIG = '9007199254740993';
const ROUNDED = '9007199254740992';

/** A delivery body as the upstream might write it, with the invoice's numbers spelt out as text. */
function invoiceBody(id: string, total: string, rate = '1e2'): string {
  return `{"event":"invoice.created","object":{"id":${id},"numberId":${id},"userId":7,"total":${total},"rate":${rate},"statusOffice":2,"statusOfficeName":"paid","date":"2026-11-22 10:00:00","description":"FV"}}`;
}

/** The object's text inside a JSON text that carries it (a record, a feed body). */
const objectText = (id: string, total: string, rate = '1e2') => invoiceBody(id, total, rate).slice('{"event":"invoice.created","object":'.length, -1);

describe('every connector receives each number literal as received (property)', () => {
  let receiver: AccountingReceiver;
  let fake: FakeSheets;
  let dir: string;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    receiver = await startAccountingReceiver();
    fake = await startFakeSheets({ tokens: ['t'] });
    fake.createSpreadsheet(SHEET, []);
    const temp = await tempDir('exact-');
    dir = temp.dir;
    cleanups.push(temp.cleanup, () => receiver.close(), () => fake.close());
  });
  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function ctx<C>(config: C, dispatcher: ConnectorContext['dispatcher']): ConnectorContext<C> {
    return { config, dispatcher, clock: systemClock, log, signal: new AbortController().signal, metrics: createMetricsRegistry(), cache: new Map() };
  }

  it('file, webhook, accounting (feed and ledger) and Google Sheets', async () => {
    const sheets = sheetsContext({ spreadsheetId: SHEET, accessToken: 't', rootUrl: fake.rootUrl, columns: { invoices: { numberId: 'Number', total: 'Total' } } });
    cleanups.push(sheets.close);
    const file = ctx(fileConfigSchema.parse({ name: 'files', type: 'file', streams: ['invoices'], dir: path.join(dir, 'out') }), sheets.ctx.dispatcher);
    const hook = ctx(webhookConfigSchema.parse({ name: 'hook', type: 'webhook', streams: ['invoices'], url: receiver.url, secret: SECRET }), sheets.ctx.dispatcher);
    const books = ctx(accountingConfigSchema.parse({ name: 'books', type: 'accounting', url: receiver.url, secret: SECRET, ledgerDir: path.join(dir, 'ledger'), csv: MACHINE_LEDGER }), sheets.ctx.dispatcher);
    // The file connector keeps its file open between deliveries, in its cache, as the outbox's would.
    cleanups.push(() => releaseCache(file.cache));
    let serial = 0;

    await fc.assert(
      fc.asyncProperty(numberLiteral(), async (literal) => {
        // Each run its own invoice, with an id beyond 2^53, and the literal as its amounts.
        const id = `${BIG}${serial++}`;
        const body = readBody(invoiceBody(id, literal, literal));
        const [, invoiceRecord] = eventRecords(body, identifyEvent(body), new Date().toISOString());
        const stored = () => new StoredRecord(invoiceRecord!.id, 'invoices', eventRecordJson(invoiceRecord!));
        const expected = objectText(id, literal, literal);

        expect(await fileConnector.deliver(file, [stored()])).toEqual([{ status: 'done' }]);
        const lines = (await readFile(path.join(dir, 'out', 'invoices.jsonl'), 'utf8')).trimEnd().split('\n');
        expect(lines.at(-1)).toContain(`"key":${id},`);
        expect(lines.at(-1)).toContain(`"record":${expected}}`);

        const before = receiver.requests.length;
        expect(await webhookConnector.deliver(hook, [stored()])).toEqual([{ status: 'done', httpStatus: 200 }]);
        expect(await accountingConnector.deliver(books, [stored()])).toEqual([{ status: 'done', httpStatus: 200 }]);
        const [posted, feed] = receiver.requests.slice(before).map((r) => r.body.toString('utf8'));
        expect(posted).toContain(`"record":${expected}}`);
        expect(feed).toContain(`"invoiceId":${id},`);
        expect(feed).toContain(`"invoice":${expected},`);
        const ledger = await ledgerText(path.join(dir, 'ledger'));
        expect(ledger).toContain(`,${id},${id},`);
        expect(ledger).toContain(expected.replaceAll('"', '""'));

        expect(await googleSheetsConnector.deliver(sheets.ctx, [stored()])).toEqual([{ status: 'done' }]);
        const rows = fake.values(SHEET, 'Invoices');
        const row = rows.find((r) => String(r[0]) === id);
        expect(row, `a row keyed ${id}`).toBeDefined();
        // Cells hold the numbers as written: text where a double would round or rewrite them.
        expect(String(row![rows[0]!.indexOf('Number')])).toBe(id);
        expect(String(row![rows[0]!.indexOf('Total')])).toBe(literal);
      }),
      { numRuns: 25 },
    );
  });
});

async function ledgerText(dir: string): Promise<string> {
  const names = (await readdir(dir)).filter((name) => name.endsWith('.csv')).sort();
  return (await Promise.all(names.map((name) => readFile(path.join(dir, name), 'utf8')))).join('');
}

describe.each(ENGINES)('an invoice id of 2^53 + 1 end to end, on %s', (engine) => {
  let app: App;
  let receiver: AccountingReceiver;
  let fake: FakeSheets;
  let out: string;
  const cleanups: (() => Promise<void>)[] = [];

  afterEach(async () => {
    await app?.stop();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('reaches every connector exactly, and 2^53 is another invoice, not a duplicate', async () => {
    receiver = await startAccountingReceiver();
    fake = await startFakeSheets({ tokens: ['t'] });
    fake.createSpreadsheet(SHEET, []);
    const temp = await tempDir('exact-e2e-');
    out = temp.dir;
    const opened = await testStore(engine, { start: false });
    cleanups.push(temp.cleanup, opened.cleanup, () => receiver.close(), () => fake.close());
    const config = quietConfig(SECRET, path.join(out, 'store'), {
      connectors: [
        { name: 'files', type: 'file', streams: ['invoices'], dir: path.join(out, 'files') },
        { name: 'hook', type: 'webhook', streams: ['invoices'], url: `${receiver.url}/hook`, secret: SECRET },
        { name: 'books', type: 'accounting', url: receiver.url, secret: SECRET, ledgerDir: path.join(out, 'ledger'), csv: MACHINE_LEDGER },
        { name: 'sheet', type: 'google-sheets', streams: ['invoices'], spreadsheetId: SHEET, accessToken: 't', rootUrl: fake.rootUrl },
      ],
    });
    app = await createApp({ config, log, mode: 'daemon', store: opened.store });
    await app.start();

    const answers = [];
    for (const id of [BIG, ROUNDED]) {
      const text = invoiceBody(id, '123.4500');
      const response = await request(`${app.server!.url}/webhooks/v2`, {
        method: 'POST', body: text, headers: { 'webhook-signature': signatureHeader(SECRET, text, Math.floor(Date.now() / 1000)) },
      });
      answers.push(await response.body.json());
    }
    expect(answers).toMatchObject([{ status: 'stored', id: expect.stringMatching(`^invoice\\.created:${BIG}:`) }, { status: 'stored', id: expect.stringMatching(`^invoice\\.created:${ROUNDED}:`) }]);
    await app.outbox.whenIdle();

    const lines = (await readFile(path.join(out, 'files', 'invoices.jsonl'), 'utf8')).trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(`"key":${BIG},`);
    expect(lines[0]).toContain(`"record":${objectText(BIG, '123.4500')}}`);
    expect(lines[1]).toContain(`"record":${objectText(ROUNDED, '123.4500')}}`);

    const bodies = receiver.requests.map((r) => r.body.toString('utf8'));
    const hooks = bodies.filter((b) => b.startsWith('{"id":'));
    const feeds = bodies.filter((b) => b.startsWith('{"schemaVersion":'));
    // Two invoices are two keys: the outbox orders each key's records, not one key's against another's.
    expect(hooks.map((b) => b.includes(`"record":${objectText(BIG, '123.4500')}}`)).sort()).toEqual([false, true]);
    expect(feeds).toHaveLength(2);
    const bigFeed = feeds.find((b) => b.includes(`"invoiceId":${BIG},`));
    expect(bigFeed).toContain(`"invoice":${objectText(BIG, '123.4500')},`);
    expect(feeds.filter((b) => b.includes(`"invoiceId":${ROUNDED},`))).toHaveLength(1);
    const ledger = await ledgerText(path.join(out, 'ledger'));
    expect(ledger).toContain(`,${BIG},${BIG},`);
    expect(ledger).toContain(`,${ROUNDED},${ROUNDED},`);

    const rows = fake.values(SHEET, 'Invoices');
    expect(rows.slice(1).map((r) => String(r[0])).sort()).toEqual([ROUNDED, BIG]);
  });
});
