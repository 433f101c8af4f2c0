import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { parseConfig } from '../src/config/index.js';
import { silentLogger } from '../src/log.js';
import { tempDir } from './support/temp.js';
import { BROWSER_TESTS, launchChromium } from './support/browser.js';

export const SCREENSHOT = path.resolve('test-results/status-page.png');

describe.runIf(BROWSER_TESTS)('status page in headless Chromium', () => {
  let app: App;
  let browser: Browser;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    const temp = await tempDir('schoolbridge-browser-');
    cleanup = temp.cleanup;
    const yaml = `
upstream: { baseUrl: sandbox }
sandbox: { students: 12, retryTimeScale: 0.0001 }
server: { port: 0 }
poll: { onStart: true, schedule: "0 0 1 1 *" }
store: { dir: ${JSON.stringify(path.join(temp.dir, 'data'))} }
connectors:
  - { name: files, type: file, streams: [students, users, invoices, events, roster], dir: ${JSON.stringify(path.join(temp.dir, 'out'))} }
`;
    app = await createApp({ config: parseConfig(yaml, 'browser.yaml', {}), log: silentLogger(), mode: 'daemon' });
    await app.start();
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
    await cleanup?.();
  });

  it('shows readiness, queue depth, dead deliveries, connectors and registrations', async () => {
    const page = await browser.newPage({ viewport: { width: 420, height: 900 } });
    const response = await page.goto(`${app.server!.url}/`);
    expect(response?.status()).toBe(200);
    await expect.poll(async () => (await page.textContent('#readiness'))?.trim()).toMatch(/^(ready|not ready)$/);
    expect(Number(await page.textContent('#queue-depth'))).toBeGreaterThanOrEqual(0);
    expect(Number(await page.textContent('#dead-count'))).toBe(0);
    expect(await page.textContent('body')).toContain('files');
    expect(await page.textContent('body')).toContain('invoice.created');
    await mkdir(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(existsSync(SCREENSHOT)).toBe(true);
  });
});
