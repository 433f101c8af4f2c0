import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { configSchema } from '../src/config/index.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import { signatureHeader } from '../src/signature/index.js';
import { SATURATED } from '../src/webhooks/intake-load.js';
import { freePort } from './support/net.js';
import { tempDir } from './support/temp.js';
import { eventBody, invoice } from './support/webhooks.js';

/** End to end: the daemon app against the sandbox, through the outbox to the `file` connector. */
const log = pino({ level: 'silent' });
const apps: App[] = [];
const sandboxes: Sandbox[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.stop();
  for (const sandbox of sandboxes.splice(0)) await sandbox.stop();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function daemon(dir: string, overrides: Record<string, unknown> = {}): Promise<App> {
  const config = configSchema.parse({
    upstream: { baseUrl: 'sandbox' },
    sandbox: { students: 1, retryTimeScale: 0.00001 },
    server: { host: '127.0.0.1', port: 0 },
    poll: { onStart: false, schedule: '0 0 1 1 *' },
    export: { onStart: false, schedule: '0 0 1 1 *' },
    store: { dir: path.join(dir, 'store') },
    connectors: [{ name: 'files', type: 'file', streams: ['events', 'invoices'], dir: path.join(dir, 'out') }],
    ...overrides,
  });
  const app = await createApp({ config, log, mode: 'daemon' });
  apps.push(app);
  await app.start();
  return app;
}

async function jsonl(file: string): Promise<{ id: string; key: unknown; record: unknown }[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { id: string; key: unknown; record: unknown });
}

describe('webhook intake end to end', () => {
  it('answers a burst of webhooks first and delivers each of them once after it', async () => {
    const { dir, cleanup } = await tempDir();
    cleanups.push(cleanup);
    const secret = 'burst-secret';
    const app = await daemon(dir, { upstream: { baseUrl: 'sandbox', clientId: 'burst', clientSecret: secret }, webhooks: { reconcileOnStart: false } });
    const count = 400;
    const concurrency = 50;
    const pool = new Pool(app.server!.url, { connections: concurrency });
    const signedAt = Math.floor(Date.now() / 1000);
    const statuses: number[] = [];
    let next = 0;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const id = ++next;
        const body = eventBody('invoice.created', invoice({ id, numberId: id }));
        const answer = await pool.request({ path: '/webhooks/v2', method: 'POST', headers: { 'webhook-signature': signatureHeader(secret, body, signedAt) }, body });
        statuses.push(answer.statusCode);
        await answer.body.dump();
      }
    }));
    await pool.close();
    expect(statuses.filter((status) => status === 200)).toHaveLength(count);
    // Far more than SATURATED were answered at once: the deliveries waited (outbox/intake-first.ts).
    expect(concurrency).toBeGreaterThan(SATURATED);
    expect(app.intakeLoad.saturatedAt()).toBeGreaterThan(-Infinity);
    expect(app.intakeLoad.inFlight()).toBe(0);
    await app.outbox.whenIdle();
    for (const stream of ['events', 'invoices']) {
      const lines = await jsonl(path.join(dir, 'out', `${stream}.jsonl`));
      expect(lines).toHaveLength(count);
      expect(new Set(lines.map((line) => line.key)).size).toBe(count);
    }
  });

  it('an invoice created in the sandbox reaches invoices.jsonl once, also when redelivered', async () => {
    const { dir, cleanup } = await tempDir();
    cleanups.push(cleanup);
    const app = await daemon(dir);
    await app.webhooks.reconciler.converged();
    const sandbox = app.sandbox!.control;
    expect(sandbox.webhooks().map((w) => [w.event, w.callbackUrl])).toEqual([
      ['invoice.created', app.callbackUrl()],
      ['invoice.updated', app.callbackUrl()],
    ]);

    const invoice = sandbox.createInvoice({ extraField: 'kept' });
    await sandbox.idle();
    await app.outbox.whenIdle();
    const invoicesFile = path.join(dir, 'out', 'invoices.jsonl');
    const first = await jsonl(invoicesFile);
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ key: invoice.id, record: invoice });

    // Redeliveries: the same event fired again (new timestamp, new signature), and through a
    // duplicate registration that the sandbox also delivers to.
    sandbox.fireEvent('invoice.created', invoice);
    await app.upstream.registerWebhook('invoice.created', app.callbackUrl());
    sandbox.fireEvent('invoice.created', invoice);
    await sandbox.idle();
    await app.outbox.whenIdle();
    expect(await jsonl(invoicesFile)).toEqual(first);
    const delivered = sandbox.deliveryLog().filter((d) => d.event === 'invoice.created');
    expect(delivered.map((d) => d.status)).toEqual([200, 200, 200, 200]);

    // An update is a new event.
    sandbox.updateInvoice(invoice.id, { statusOffice: 3 });
    await sandbox.idle();
    await app.outbox.whenIdle();
    expect((await jsonl(invoicesFile)).map((r) => r.key)).toEqual([invoice.id, invoice.id]);
    expect(await jsonl(path.join(dir, 'out', 'events.jsonl'))).toHaveLength(2);
  });

  it('a second start of the daemon makes zero registration writes', async () => {
    const { dir, cleanup } = await tempDir();
    cleanups.push(cleanup);
    const sandbox = createSandbox({ port: 0, students: 1, log });
    sandboxes.push(sandbox);
    await sandbox.start();
    const port = await freePort();
    const overrides = {
      upstream: { baseUrl: sandbox.url, clientId: 'sandbox-client', clientSecret: 'sandbox-secret' },
      server: { host: '127.0.0.1', port },
    };
    const writes = () => sandbox.control.requestCount('POST', '/api/v2/webhook') + sandbox.control.requestCount('DELETE', '/api/v2/webhook');

    const first = await daemon(dir, overrides);
    await first.webhooks.reconciler.converged();
    await first.stop();
    apps.splice(apps.indexOf(first), 1);
    expect(writes()).toBe(2);
    expect(sandbox.control.webhooks()).toHaveLength(2);

    const second = await daemon(dir, overrides);
    await second.webhooks.reconciler.converged();
    expect(writes()).toBe(2);
    expect(second.readiness.evaluate().checks.webhooks).toMatchObject({ ok: true });
  });
});
