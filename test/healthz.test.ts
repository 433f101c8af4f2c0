import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { configSchema } from '../src/config/index.js';
import { createSandbox } from '../sandbox/index.js';
import { freePort } from './support/net.js';
import { tempDir } from './support/temp.js';

/**
 * /healthz (the image's HEALTHCHECK) tells whether the daemon can work: it fails when the upstream
 * refuses the credentials, not while the upstream is only away — /readyz says that.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function daemon(baseUrl: string, secret: string): Promise<App> {
  const { dir, cleanup } = await tempDir('sb-healthz-');
  cleanups.push(cleanup);
  const config = configSchema.parse({
    upstream: { baseUrl, clientId: 'school', clientSecret: secret },
    server: { host: '127.0.0.1', port: 0 },
    webhooks: { reconcileOnStart: false },
    poll: { schedule: '0 0 1 1 *', onStart: false },
    store: { dir: path.join(dir, 'data') },
  });
  const app = await createApp({ config, log: pino({ level: 'silent' }), mode: 'daemon' });
  cleanups.push(() => app.stop());
  await app.start();
  return app;
}

const get = async (app: App, route: string) => (await fetch(`${app.server!.url}${route}`)).status;

describe('/healthz', () => {
  it('fails when the upstream refuses the credentials, and says so', async () => {
    const sandbox = createSandbox({ clientId: 'school', clientSecret: 'right', students: 1 });
    cleanups.push(() => sandbox.stop());
    await sandbox.start();
    const app = await daemon(sandbox.url, 'wrong');
    expect(await get(app, '/healthz')).toBe(200);
    expect((await app.poll.sync()).outcome).toBe('failed');
    const answer = await fetch(`${app.server!.url}/healthz`);
    expect(answer.status).toBe(503);
    expect(await answer.json()).toMatchObject({ status: 'failing', reasons: [expect.stringMatching(/^upstream: the credentials are refused .*; fix upstream\.token, or upstream\.clientId and upstream\.clientSecret$/)] });
  });

  it('stays 200 while the upstream is only unreachable; /readyz is 503', async () => {
    const app = await daemon(`http://127.0.0.1:${await freePort()}`, 'any');
    expect((await app.poll.sync()).outcome).toBe('failed');
    expect(await get(app, '/healthz')).toBe(200);
    expect(await get(app, '/readyz')).toBe(503);
  });
});
