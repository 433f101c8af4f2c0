import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { Agent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readLedgerRows } from './support/ledger.js';
import { accountingConnector, type AccountingConfig } from '../connectors/accounting/index.js';
import { invoiceRecord } from '../connectors/accounting/test-builders.js';
import type { Clock } from '../src/clock.js';
import { StoredRecord } from '../src/connectors/stored-record.js';
import type { ConnectorContext } from '../src/connectors/types.js';
import type { AnyRecord } from '../src/records.js';
import { verifySignature } from '../src/signature/index.js';
import { startAccountingReceiver, type AccountingReceiver } from './accounting-receiver.js';

const SECRET = 'accounting-secret';
const NOW = Date.parse('2026-11-22T10:00:05Z');
const clock: Clock = { now: () => NOW, sleep: async () => {} };

let receiver: AccountingReceiver;
let dispatcher: Agent;
let dir: string;

beforeEach(async () => {
  receiver = await startAccountingReceiver();
  dispatcher = new Agent();
  dir = await mkdtemp(join(tmpdir(), 'accounting-'));
});
afterEach(async () => {
  await dispatcher.close();
  await receiver.close();
  await rm(dir, { recursive: true, force: true });
});

function context(overrides: Partial<AccountingConfig> = {}): ConnectorContext<AccountingConfig> {
  const config = accountingConnector.configSchema.parse({
    name: 'books', type: 'accounting', url: receiver.url, secret: SECRET, ledgerDir: join(dir, 'ledger'), ...overrides,
  });
  return {
    config, dispatcher, clock, log: pino({ level: 'silent' }), signal: new AbortController().signal,
    metrics: new Registry(), cache: new Map(),
  };
}

/** Delivers records made in memory, as the outbox would hand them over: with JSON.stringify's text. */
const deliver = (ctx: ConnectorContext<AccountingConfig>, records: readonly AnyRecord[]) =>
  accountingConnector.deliver(ctx, records.map((record) => StoredRecord.of(record)));

const ledgerRows = async (): Promise<Record<string, string>[]> =>
  readLedgerRows(join(dir, 'ledger', 'ledger-2026-11-22.csv'));

const v1 = invoiceRecord({}, { someUnknownField: 'kept, "as is"' });
const v2 = invoiceRecord({ id: 'invoices:invoice.updated:1001:bbbbbbbbbbbb', event: 'invoice.updated' }, { statusOffice: 1, statusOfficeName: 'unpaid' });
const other = invoiceRecord({ id: 'invoices:invoice.created:2002:cccccccccccc', key: 2002 }, { id: 2002 });

describe('accounting connector: one delivery', () => {
  it('POSTs the versioned body with Idempotency-Key and a signature the receiver can verify', async () => {
    expect(await deliver(context(), [v1])).toEqual([{ status: 'done', httpStatus: 200 }]);
    const [request] = receiver.requests;
    expect(request?.method).toBe('POST');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['idempotency-key']).toBe(v1.id);
    const verified = verifySignature([SECRET], request?.headers['webhook-signature'], request!.body, NOW, 300);
    expect(verified).toMatchObject({ ok: true, timestamp: Math.floor(NOW / 1000) });
    expect(verifySignature(['another secret'], request?.headers['webhook-signature'], request!.body, NOW, 300).ok).toBe(false);
    const body = JSON.parse(request!.body.toString('utf8'));
    expect(body).toMatchObject({
      schemaVersion: 1, recordId: v1.id, event: 'invoice.created', invoiceId: 1001, receivedAt: v1.receivedAt,
      invoice: v1.record, derived: { timezone: 'Europe/Warsaw', isPaid: true, dates: { date: '2026-11-22T11:00:00+01:00' } },
    });
    expect(body.invoice.someUnknownField).toBe('kept, "as is"');
  });

  it('sends configured headers but never lets them replace the signature or the key', async () => {
    const parsed = context({ headers: { 'X-Api-Key': 'k1' } });
    // The config refuses headers of ours (config/fields.ts); given all the same, ours win.
    const ctx = { ...parsed, config: { ...parsed.config, headers: { ...parsed.config.headers, 'Idempotency-Key': 'forged', 'Webhook-Signature': 'forged' } } };
    await deliver(ctx, [v1]);
    const headers = receiver.requests[0]?.headers;
    expect(headers?.['x-api-key']).toBe('k1');
    expect(headers?.['idempotency-key']).toBe(v1.id);
    expect(headers?.['webhook-signature']).not.toContain('forged');
  });

  it.each([
    [{ status: 503 }, 'retry', 'accounting.unavailable', undefined],
    [{ status: 429, headers: { 'retry-after': '30' } }, 'retry', 'accounting.unavailable', 30_000],
    [{ status: 408 }, 'retry', 'accounting.unavailable', undefined],
    [{ status: 400, body: 'bad invoice' }, 'dead', 'accounting.rejected', undefined],
    [{ status: 409 }, 'dead', 'accounting.rejected', undefined],
  ])('answer %j → %s (%s), and no ledger row', async (answer, status, code, retryAfterMs) => {
    receiver.script(answer);
    const [outcome] = await deliver(context(), [v1]);
    expect(outcome?.status).toBe(status);
    expect(outcome?.status !== 'done' && outcome?.error.code).toBe(code);
    if (outcome?.status === 'retry') expect(outcome.retryAfterMs).toBe(retryAfterMs);
    await expect(readFile(join(dir, 'ledger', 'ledger-2026-11-22.csv'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a refused connection is a retry', async () => {
    await receiver.close();
    const [outcome] = await deliver(context(), [v1]);
    expect(outcome).toMatchObject({ status: 'retry', error: { code: 'accounting.network' } });
  });

  it('records that are not invoices are dead at once and nothing is sent', async () => {
    const ctx = context();
    const outcomes = await deliver(ctx, [
      invoiceRecord({ key: 1, record: null }),
      invoiceRecord({ key: 2, record: [1, 2] }),
      { ...invoiceRecord({ key: 3 }), stream: 'events' },
    ]);
    expect(outcomes.map((o) => o.status === 'dead' && o.error.code)).toEqual([
      'accounting.invalid_invoice', 'accounting.invalid_invoice', 'accounting.not_an_invoice',
    ]);
    expect(receiver.requests).toHaveLength(0);
  });
});

describe('accounting connector: exactly once', () => {
  it('with a ledger, a redelivered record is not sent again and has one row', async () => {
    const ctx = context();
    await deliver(ctx, [v1]);
    expect(await deliver(ctx, [v1])).toEqual([{ status: 'done' }]);
    // A restart: a fresh cache reads the ledger back from disk.
    expect(await deliver(context(), [v1])).toEqual([{ status: 'done' }]);
    expect(receiver.requests).toHaveLength(1);
    expect((await ledgerRows()).map((row) => row.recordId)).toEqual([v1.id]);
  });

  it('without a ledger, a redelivery is sent again with the same Idempotency-Key', async () => {
    const ctx = context({ ledgerDir: undefined });
    await deliver(ctx, [v1]);
    await deliver(ctx, [v1]);
    expect(receiver.requests.map((r) => r.headers['idempotency-key'])).toEqual([v1.id, v1.id]);
    expect(receiver.accepted.size).toBe(1);
  });

  it('when the ledger cannot be written after the POST, it retries: the POST again (same key), then one row', async () => {
    const blocked = join(dir, 'ledger');
    await writeFile(blocked, 'a file where the directory should be');
    const ctx = context();
    const [first] = await deliver(ctx, [v1]);
    expect(first).toMatchObject({ status: 'retry', error: { code: 'accounting.ledger_read' } });
    await rm(blocked);
    expect(await deliver(ctx, [v1])).toEqual([{ status: 'done', httpStatus: 200 }]);
    expect((await ledgerRows()).map((row) => row.recordId)).toEqual([v1.id]);
    expect(receiver.accepted.size).toBe(1);
  });

  it('in one batch, a failed version holds back the later versions of its invoice only', async () => {
    receiver.script({ status: 503 });
    const outcomes = await deliver(context(), [v1, v2, other]);
    expect(outcomes.map((o) => o.status)).toEqual(['retry', 'retry', 'done']);
    expect(outcomes[1]).toMatchObject({ error: { code: 'accounting.held_back' } });
    expect(receiver.requests.map((r) => r.headers['idempotency-key'])).toEqual([v1.id, other.id]);
  });
});

describe('accounting connector: check', () => {
  it('is ok when the receiver answers and the ledger directory is writable', async () => {
    expect(await accountingConnector.check(context())).toEqual({ ok: true });
    expect(receiver.probes[0]?.method).toBe('HEAD');
    expect(receiver.requests).toHaveLength(0);
  });

  it.each([
    [{ status: 401 }, /refuses the configured credentials \(401\)/],
    [{ status: 503 }, /answers 503/],
  ])('answer %j is not ok', async (answer, reason) => {
    receiver.scriptProbe(answer);
    const result = await accountingConnector.check(context());
    expect(result.ok === false && result.reason).toMatch(reason);
  });

  it('a ledger that could not be written is not ok until a row is written again', async () => {
    const ctx = context();
    expect(await accountingConnector.check(ctx)).toEqual({ ok: true });
    // The directory stays writable; the day's file cannot be appended to (as on a full disk).
    await mkdir(join(dir, 'ledger', 'ledger-2026-11-22.csv'), { recursive: true });
    expect((await deliver(ctx, [v1]))[0]).toMatchObject({ status: 'retry', error: { code: expect.stringMatching(/^accounting\.ledger_/) } });
    const failing = await accountingConnector.check(ctx);
    expect(failing.ok === false && failing.reason).toMatch(/^the ledger in .*ledger could not be written: .*EISDIR.*; deliveries wait until it can/);
    await rm(join(dir, 'ledger', 'ledger-2026-11-22.csv'), { recursive: true });
    expect(await deliver(ctx, [v1])).toEqual([{ status: 'done', httpStatus: 200 }]);
    expect(await accountingConnector.check(ctx)).toEqual({ ok: true });
  });

  it('a closed receiver or an unwritable ledger directory is not ok', async () => {
    await writeFile(join(dir, 'blocked'), 'x');
    const unwritable = await accountingConnector.check(context({ ledgerDir: join(dir, 'blocked', 'ledger') }));
    expect(unwritable.ok === false && unwritable.reason).toMatch(/^cannot make the ledger directory .*blocked\/ledger: a file takes its path; set this connector's ledgerDir to a directory$/);
    await receiver.close();
    const closed = await accountingConnector.check(context());
    expect(closed.ok === false && closed.reason).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+/);
  });
});
