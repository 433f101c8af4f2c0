import path from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { signatureHeader } from '../src/signature/index.js';
import { eventBody, invoice } from './support/webhooks.js';
import { capturedLogger, quietConfig } from './support/quiet-daemon.js';
import { tempDir } from './support/temp.js';

/** The status page's "events today" counts what every process of the store received since midnight. */
const SECRET = 'today-secret';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function daemon(storeDir: string): Promise<{ app: App; url: string }> {
  const app = await createApp({ config: quietConfig(SECRET, storeDir), log: capturedLogger('warn').log, mode: 'daemon' });
  cleanups.push(() => app.stop());
  await app.start();
  return { app, url: app.server!.url };
}

async function deliver(url: string, id: number, secret = SECRET): Promise<number> {
  const body = eventBody('invoice.created', invoice({ id }));
  const answer = await request(`${url}/webhooks/v2`, { method: 'POST', body, headers: { 'webhook-signature': signatureHeader(secret, body, Math.floor(Date.now() / 1000)) } });
  await answer.body.dump();
  return answer.statusCode;
}

const today = async (url: string) => ((await (await request(`${url}/status.json`)).body.json()) as { events: { receivedToday: number; rejectedToday: number } }).events;

describe('events today on the status page', () => {
  it('are still counted after a restart, and include what is not stored yet', async () => {
    const { dir, cleanup } = await tempDir('today-');
    cleanups.push(cleanup);
    const store = path.join(dir, 'store');
    const first = await daemon(store);
    expect(await deliver(first.url, 1)).toBe(200);
    expect(await deliver(first.url, 2, 'not-the-secret')).toBe(401);
    expect(await today(first.url)).toMatchObject({ receivedToday: 2, rejectedToday: 1 });
    await first.app.stop();

    const second = await daemon(store);
    expect(await today(second.url)).toMatchObject({ receivedToday: 2, rejectedToday: 1 });
    expect(await deliver(second.url, 3)).toBe(200);
    expect(await today(second.url)).toMatchObject({ receivedToday: 3, rejectedToday: 1 });
    // While the store cannot be read, the page has this process's own count, not an error.
    second.app.store.history.tallies = () => Promise.reject(new Error('connect ECONNREFUSED'));
    expect(await today(second.url)).toMatchObject({ receivedToday: 1, rejectedToday: 0 });
  });
});
