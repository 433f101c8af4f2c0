import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { configSchema } from '../src/config/index.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import { freePort } from './support/net.js';
import { tempDir } from './support/temp.js';

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
