import { join } from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { readLedgerRows } from './support/ledger.js';
import { accountingConnector } from '../connectors/accounting/index.js';
import { invoiceRecord } from '../connectors/accounting/test-builders.js';
import { systemClock } from '../src/clock.js';
import { createConnectorInstances, createOutbox, type Outbox } from '../src/outbox/index.js';
import type { EventRecord } from '../src/records.js';
import { verifySignature } from '../src/signature/index.js';
import type { Delivery } from '../src/store/index.js';
import { startAccountingReceiver, type AccountingReceiver } from './accounting-receiver.js';
import { ENGINES, testStore, type Engine } from './support/stores.js';
import { tempDir } from './support/temp.js';

const SECRET = 'books-secret';
const log = pino({ level: 'silent' });
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Rig {
  outbox: Outbox;
  receiver: AccountingReceiver;
  ledgerDir: string;
  /** Resolves once `count` deliveries are done. */
  delivered(count: number): Promise<void>;
  retries: { delivery: Delivery; status?: number; retryAfterMs?: number }[];
}

async function rig(engine: Engine): Promise<Rig> {
  const receiver = await startAccountingReceiver();
  const { dir, cleanup } = await tempDir('accounting-outbox-');
  const { store, cleanup: closeStore } = await testStore(engine, { clock: systemClock });
  const dispatcher = new Agent();
  const ledgerDir = join(dir, 'ledger');
  const config = accountingConnector.configSchema.parse({ name: 'books', type: 'accounting', url: receiver.url, secret: SECRET, ledgerDir });
  const outbox = createOutbox({
    store: store.outbox, connectors: createConnectorInstances([config]), clock: systemClock, dispatcher, log, metrics: new Registry(),
    delivery: { maxAgeHours: 1, backoff: { baseMs: 5, maxMs: 40 }, concurrency: 4 }, checkIntervalMs: 0,
  });
  cleanups.push(cleanup, () => receiver.close(), () => dispatcher.close(), closeStore, () => outbox.stop());
  await outbox.start();
  let done = 0;
  const waiters: { count: number; resolve(): void }[] = [];
  outbox.on('delivered', () => {
    done++;
    for (const waiter of waiters.filter((w) => done >= w.count)) waiter.resolve();
  });
  const retries: Rig['retries'] = [];
  outbox.on('retry', ({ delivery, error }) => retries.push({ delivery, status: error?.status, retryAfterMs: error?.retryAfterMs }));
  return {
    outbox, receiver, ledgerDir, retries,
    delivered: (count) => (done >= count ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve }))),
  };
}

/** Two versions (created, then updated) of each of `invoices` invoices, in the order they were received. */
function versions(invoices: number): EventRecord[] {
  return Array.from({ length: invoices }, (_, i) => 3000 + i).flatMap((id) => [
    invoiceRecord({ id: `invoices:invoice.created:${id}:aaaaaaaaaaaa`, key: id }, { id, statusOffice: 1, statusOfficeName: 'unpaid' }),
    invoiceRecord({ id: `invoices:invoice.updated:${id}:bbbbbbbbbbbb`, key: id, event: 'invoice.updated' }, { id, description: `FV ${id}, "korekta"\nZażółć` }),
  ]);
}

describe.each(ENGINES)('accounting connector through the outbox on %s', (engine) => {
  it('503 for a while, then 429 with Retry-After, then 200: each version arrives once, in order, and has one ledger row', async () => {
    const { outbox, receiver, ledgerDir, delivered, retries } = await rig(engine);
    receiver.script(
      { status: 503 }, { status: 503 }, { status: 503 }, { status: 503 },
      { status: 429, headers: { 'retry-after': '1' } },
    );
    const records = versions(3);
    expect(await outbox.enqueue(records)).toBe(6);
    await delivered(6);

    // Exactly once in effect: as many distinct keys as versions, each accepted body signed and intact.
    expect([...receiver.accepted.keys()].sort()).toEqual(records.map((r) => r.id).sort());
    for (const request of receiver.requests) {
      expect(verifySignature([SECRET], request.headers['webhook-signature'], request.body, Date.now(), 300).ok).toBe(true);
    }
    // In order per invoice: no request for an update before its create was accepted.
    for (let i = 0; i < records.length; i += 2) {
      const [created, updated] = [records[i]!, records[i + 1]!];
      const keys = receiver.requests.map((r) => ({ key: r.headers['idempotency-key'], status: r.status }));
      const createdAccepted = keys.findIndex((k) => k.key === created.id && k.status === 200);
      const firstUpdate = keys.findIndex((k) => k.key === updated.id);
      expect(createdAccepted).toBeGreaterThanOrEqual(0);
      expect(firstUpdate).toBeGreaterThan(createdAccepted);
    }
    // Retry-After honoured: the entry that got the 429 was not scheduled before the second had passed.
    const limited = retries.find((r) => r.status === 429);
    expect(limited?.retryAfterMs).toBe(1000);
    expect(limited!.delivery.runAt - limited!.delivery.lastAttemptAt!).toBeGreaterThanOrEqual(1000);
    expect(retries.filter((r) => r.status === 503)).toHaveLength(4);

    const rows = await readLedgerRows(join(ledgerDir, 'ledger-2026-11-22.csv'));
    expect(rows.map((row) => row.recordId).sort()).toEqual(records.map((r) => r.id).sort());
    expect(rows.find((row) => row.event === 'invoice.updated')?.description).toMatch(/^FV \d+, "korekta"\nZażółć$/);
  });

  it('one invoice failing holds back only its own later versions, not another invoice', async () => {
    const { outbox, receiver, delivered, retries } = await rig(engine);
    const records = versions(2);
    const [stuckCreated, stuckUpdated, ...free] = records;
    receiver.scriptFor(stuckCreated!.id, ...Array.from({ length: 1000 }, () => ({ status: 503 })));
    // The stuck invoice has failed a few times while the other one went through completely.
    const failedThrice = new Promise<void>((resolve) => outbox.on('retry', () => retries.length >= 3 && resolve()));
    await outbox.enqueue(records);
    await Promise.all([delivered(2), failedThrice]);
    expect([...receiver.accepted.keys()]).toEqual(free.map((r) => r.id));
    expect(receiver.requests.some((r) => r.headers['idempotency-key'] === stuckUpdated!.id)).toBe(false);
  });

  it('a rejected version (422) is dead at once, kept, and retryable by hand', async () => {
    const { outbox, receiver, delivered } = await rig(engine);
    receiver.script({ status: 422, body: 'unknown customer' });
    const [record] = versions(1);
    const dead = new Promise<Delivery>((resolve) => outbox.on('dead', ({ delivery }) => resolve(delivery)));
    await outbox.enqueue([record!]);
    expect(await dead).toMatchObject({ recordId: record!.id, status: 'dead', attempts: 1, lastError: expect.stringContaining('422') });
    await outbox.retry((await dead).id);
    await delivered(1);
    expect([...receiver.accepted.keys()]).toEqual([record!.id]);
  });
});
