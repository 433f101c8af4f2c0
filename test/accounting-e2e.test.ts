import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Command } from 'commander';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readLedgerRows } from './support/ledger.js';
import { createApp, type App } from '../src/app.js';
import { registerVerifySignatureCommand } from '../src/cli/commands/verify-signature.js';
import { configSchema } from '../src/config/index.js';
import type { DeliveryAttempt } from '../sandbox/types.js';
import { verifySignature } from '../src/signature/index.js';
import { startAccountingReceiver, type AccountingReceiver } from './accounting-receiver.js';
import { tempDir } from './support/temp.js';

/**
 * End to end: the embedded sandbox fires invoice events → the daemon's webhook intake
 * verifies and stores them → the outbox → the accounting connector → a loopback accounting system.
 */
const SECRET = 'books-secret';
const SANDBOX_SECRET = 'sandbox-secret';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function startDaemon(receiver: AccountingReceiver): Promise<{ app: App; ledgerDir: string }> {
  const { dir, cleanup } = await tempDir('accounting-e2e-');
  cleanups.push(cleanup);
  const ledgerDir = join(dir, 'ledger');
  const config = configSchema.parse({
    upstream: { baseUrl: 'sandbox', clientId: 'sandbox-client', clientSecret: SANDBOX_SECRET },
    sandbox: { port: 0, students: 3, retryTimeScale: 0.0001 },
    server: { host: '127.0.0.1', port: 0 },
    webhooks: { events: ['invoice.created', 'invoice.updated'] },
    poll: { onStart: false },
    export: { onStart: false },
    store: { dir: join(dir, 'store') },
    delivery: { backoff: { baseMs: 5, maxMs: 50 } },
    connectors: [{ name: 'books', type: 'accounting', url: receiver.url, secret: SECRET, ledgerDir }],
  });
  const app = await createApp({ config, log: pino({ level: 'silent' }), mode: 'daemon' });
  cleanups.push(() => app.stop());
  await app.start();
  await app.webhooks.reconciler.converged();
  return { app, ledgerDir };
}

/** Resolves once the sandbox has delivered `event` for invoice `id` (a 200 from our intake). */
function deliveredBySandbox(app: App, event: string, id: number): Promise<DeliveryAttempt> {
  return app.sandbox!.control.waitFor(
    'delivery',
    (attempt) => attempt.outcome === 'delivered' && attempt.event === event && (JSON.parse(attempt.body) as { object: { id: number } }).object.id === id,
  );
}

function deliveredByOutbox(app: App, count: number): Promise<void> {
  let seen = 0;
  return new Promise((resolve) => {
    const off = app.outbox.on('delivered', () => {
      if (++seen >= count) {
        off();
        resolve();
      }
    });
  });
}

const ledgerRows = async (ledgerDir: string): Promise<Record<string, string>[]> => {
  const rows: Record<string, string>[] = [];
  for (const name of (await readdir(ledgerDir)).filter((n) => n.startsWith('ledger-'))) rows.push(...(await readLedgerRows(join(ledgerDir, name))));
  return rows;
};

describe('accounting end to end from the sandbox', () => {
  it('created then updated reach the receiver in order, signed, with distinct keys and the unknown field; a redelivery sends nothing new', async () => {
    const receiver = await startAccountingReceiver();
    cleanups.push(() => receiver.close());
    const { app, ledgerDir } = await startDaemon(receiver);
    const control = app.sandbox!.control;
    // A poll first: the buyer is looked up among the polled users.
    expect((await app.poll.sync()).outcome).toBe('ok');
    const twoDelivered = deliveredByOutbox(app, 2);

    const created = control.createInvoice({ someUnknownField: { note: 'Zażółć, "gęślą"' } });
    const createdDelivery = await deliveredBySandbox(app, 'invoice.created', created.id);
    // The update is fired only once the create was received, so "received order" is defined.
    control.updateInvoice(created.id, { statusOffice: 1, statusOfficeName: 'unpaid' });
    await deliveredBySandbox(app, 'invoice.updated', created.id);
    await twoDelivered;

    const bodies = receiver.requests.map((r) => JSON.parse(r.body.toString('utf8')) as { event: string; recordId: string; invoice: Record<string, unknown>; derived: { isPaid: boolean; buyer: unknown } });
    expect(bodies.map((b) => b.event)).toEqual(['invoice.created', 'invoice.updated']);
    const user = control.users().find((u) => u.id === created.userId)!;
    expect(bodies[0]!.derived.buyer).toEqual({
      userId: user.id, firstName: user.firstName, lastName: user.lastName, email: user.additionalData.email,
      billingName: null, billingStreet: null, billingCity: null, billingZipCode: null, billingNipNumber: null, billingPesel: null, billingEmail: null,
    });
    expect(new Set(receiver.requests.map((r) => r.headers['idempotency-key'])).size).toBe(2);
    expect(bodies.map((b) => b.derived.isPaid)).toEqual([true, false]);
    for (const [i, request] of receiver.requests.entries()) {
      expect(request.headers['idempotency-key']).toBe(bodies[i]!.recordId);
      expect(verifySignature([SECRET], request.headers['webhook-signature'], request.body, Date.now(), 300).ok).toBe(true);
      expect(bodies[i]!.invoice.someUnknownField).toEqual({ note: 'Zażółć, "gęślą"' });
    }

    // The upstream redelivers the same event: intake dedupes it, the receiver gets nothing new.
    const redelivered = deliveredBySandbox(app, 'invoice.created', created.id);
    control.fireEvent('invoice.created', JSON.parse(createdDelivery.body).object);
    await redelivered;
    await app.outbox.whenIdle();
    expect(receiver.requests).toHaveLength(2);
    const ledger = await ledgerRows(ledgerDir);
    expect(ledger.map((row) => row.event)).toEqual(['invoice.created', 'invoice.updated']);
    expect(ledger.map((row) => row.buyer)).toEqual([`${user.firstName} ${user.lastName}`, `${user.firstName} ${user.lastName}`]);

    // verify-signature, both directions: the sandbox's delivery to us and ours to the receiver.
    await expectVerified(SANDBOX_SECRET, createdDelivery.signatureHeader, Buffer.from(createdDelivery.body));
    await expectVerified(SECRET, String(receiver.requests[1]!.headers['webhook-signature']), receiver.requests[1]!.body);
  });

  it('the receiver answers 503 for a while, then 429 with Retry-After, then 200: every invoice once, each version once in the ledger', async () => {
    const receiver = await startAccountingReceiver();
    cleanups.push(() => receiver.close());
    receiver.script({ status: 503 }, { status: 503 }, { status: 503 }, { status: 429, headers: { 'retry-after': '1' } });
    const { app, ledgerDir } = await startDaemon(receiver);
    const control = app.sandbox!.control;
    const allDelivered = deliveredByOutbox(app, 4);

    for (let i = 0; i < 3; i++) {
      const invoice = control.createInvoice({ description: `FV ${i}, "kurs"\nŁódź` });
      await deliveredBySandbox(app, 'invoice.created', invoice.id);
      if (i === 0) {
        control.updateInvoice(invoice.id, { paidAt: '2026-11-23 09:00:00' });
        await deliveredBySandbox(app, 'invoice.updated', invoice.id);
      }
    }
    await allDelivered;

    expect(receiver.requests.length).toBeGreaterThan(4);
    expect(receiver.accepted.size).toBe(4);
    const rows = await ledgerRows(ledgerDir);
    expect(rows).toHaveLength(4);
    expect(new Set(rows.map((row) => row.recordId))).toEqual(new Set(receiver.accepted.keys()));
    expect(rows.filter((row) => row.event === 'invoice.created').map((row) => row.description).sort()).toEqual(
      [0, 1, 2].map((i) => `FV ${i}, "kurs"\nŁódź`),
    );
  });
});

async function expectVerified(secret: string, header: string, body: Buffer): Promise<void> {
  const { dir, cleanup } = await tempDir('verify-');
  cleanups.push(cleanup);
  await writeFile(join(dir, 'body'), body);
  const out: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (out.push(String(chunk)), true));
  const program = new Command('schoolbridge').exitOverride();
  registerVerifySignatureCommand(program);
  await program.parseAsync(['verify-signature', '--secret', secret, '--header', header, '--body-file', join(dir, 'body')], { from: 'user' });
  vi.restoreAllMocks();
  expect(out.join('')).toMatch(/^valid: /);
}
