import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { signatureHeader } from '../src/signature/index.js';
import { eventBody, invoice } from './support/webhooks.js';
import { nextEvent } from './support/outbox.js';
import { capturedLogger, quietConfig } from './support/quiet-daemon.js';
import { tempDir } from './support/temp.js';
import { BROWSER_TESTS, launchChromium } from './support/browser.js';

const SHOTS = path.resolve('test-results');
const SECRET = 'console-browser-secret';
const TOKEN = 'console-browser-token-0123456789abcdef';

describe.runIf(BROWSER_TESTS)('operator console in headless Chromium', () => {
  let app: App;
  let browser: Browser;
  let receiver: Server;
  /** What the `hook` connector's receiver answers. */
  let answer = 500;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(req.method === 'POST' ? answer : 200).end(answer === 200 ? 'ok' : 'receiver is broken'));
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    const temp = await tempDir('schoolbridge-console-');
    cleanup = temp.cleanup;
    const config = quietConfig(SECRET, path.join(temp.dir, 'data'), {
      sandbox: { students: 12 },
      server: { host: '127.0.0.1', port: 0, adminToken: TOKEN, consolePublic: true },
      // A failing delivery is dead within a second: the test need not wait out three days.
      delivery: { maxAgeHours: 0.0003, backoff: { baseMs: 50, maxMs: 200 } },
      connectors: [
        { name: 'files', type: 'file', streams: ['students', 'users', 'invoices', 'events', 'roster'], dir: path.join(temp.dir, 'out') },
        { name: 'hook', type: 'webhook', streams: ['invoices'], url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, secret: 'hook-signing' },
      ],
    });
    app = await createApp({ config, log: capturedLogger('error').log, mode: 'daemon' });
    await app.start();
    expect((await app.poll.sync()).outcome).toBe('ok');
    await app.outbox.whenIdle();
    await app.history.refreshPeople();
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
    await cleanup?.();
  });

  const search = async (page: Page, text: string) => {
    await page.fill('#search', text);
    await page.click('#search-form button[type=submit]');
  };

  it('finds a student by name, shows a failed group, retries it with the token, and fits a phone', async () => {
    const [student] = await app.store.people.search({ text: 'a' }, 1);
    expect(student?.stream).toBe('students');
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${app.server!.url}/`);

    // A student by name: the trail of their record to the `file` connector.
    await search(page, student!.name);
    const trail = page.locator(`#console-records .trail[data-record^="students:${student!.key}:"] .connector-trail[data-connector="files"]`);
    await trail.waitFor();
    expect(await trail.textContent()).toContain('delivered');
    expect(await page.textContent('#console-records')).toContain('found by the poll at');

    // The receiver answers 500: three invoices fail for good, one group.
    const dead = [1, 2, 3].map(() => nextEvent(app.outbox, 'dead', (p) => p.delivery.connector === 'hook'));
    for (const id of [501, 502, 503]) {
      const body = eventBody('invoice.created', invoice({ id, description: `FV ${id}/11/2026` }));
      const r = await request(`${app.server!.url}/webhooks/v2`, { method: 'POST', body, headers: { 'webhook-signature': signatureHeader(SECRET, body, Math.floor(Date.now() / 1000)) } });
      expect(r.statusCode).toBe(200);
      await r.body.dump();
    }
    await Promise.all(dead);
    await page.reload();
    const group = page.locator('#dead-groups tr', { hasText: 'hook' });
    await group.waitFor();
    expect(await group.textContent()).toContain('webhook.unavailable (HTTP 500); gave up after retrying');
    expect(await page.textContent('#console-badge')).toBe('needs attention');

    // Actions need the token; a wrong one changes nothing and says so.
    await group.locator('button.action').click();
    await expect.poll(() => page.textContent('#console-message')).toContain('Enter the admin token first');
    await page.fill('#token', 'not-the-token-not-the-token-xx');
    await page.click('#token-form button[type=submit]');
    await group.locator('button.action').click();
    await expect.poll(() => page.textContent('#console-message')).toContain('Wrong token: nothing was changed');
    expect(await app.outbox.list({ state: 'dead' })).toHaveLength(3);

    // The receiver is fixed; the right token retries the group, and the invoices are delivered.
    answer = 200;
    await page.fill('#token', TOKEN);
    await page.click('#token-form button[type=submit]');
    await page.locator('#dead-groups tr', { hasText: 'hook' }).locator('button.action').click();
    await expect.poll(() => page.textContent('#console-message')).toContain('Retried 3');
    await expect.poll(async () => (await app.outbox.list({ state: 'dead' })).length).toBe(0);
    await app.outbox.whenIdle();
    await page.reload();
    await expect.poll(() => page.textContent('#console-problems')).toContain('nothing failed for good');
    // The token is kept for the tab: after a reload the form is not asked again.
    await expect.poll(() => page.isHidden('#token-form')).toBe(true);
    await search(page, 'FV 502/11');
    const delivered = page.locator('#console-records .connector-trail[data-connector="hook"]').first();
    await delivered.waitFor();
    expect(await delivered.textContent()).toContain('delivered');
    expect(await delivered.textContent()).toContain('failed, will retry');

    await mkdir(SHOTS, { recursive: true });
    await page.screenshot({ path: path.join(SHOTS, 'console-1280.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await search(page, student!.name);
    await page.locator('#console-records .trail').first().waitFor();
    const scroll = await page.evaluate<{ content: number; view: number }>('({ content: document.documentElement.scrollWidth, view: window.innerWidth })');
    expect(scroll.content).toBeLessThanOrEqual(scroll.view);
    await page.screenshot({ path: path.join(SHOTS, 'console-390.png'), fullPage: true });
    expect(existsSync(path.join(SHOTS, 'console-390.png'))).toBe(true);
  });
});
