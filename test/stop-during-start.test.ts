import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApp } from '../src/app.js';
import type { Clock } from '../src/clock.js';
import { configSchema } from '../src/config/index.js';
import { createLifecycle } from '../src/lifecycle.js';
import { createPgStore } from '../src/store/postgres/pg-store.js';
import { accepts, freePort } from './support/net.js';
import { startingApp } from './support/starting-app.js';
import { tempDir } from './support/temp.js';

/**
 * `docker stop` during a start (the store opening): the start ends there, and nothing begins
 * after the stop was asked for: no server, no poll, no webhook registered upstream.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a stop during the start', () => {
  it('ends the start once the store has opened: nothing listens, polls or registers upstream, and the store is closed', async () => {
    const { dir, cleanup } = await tempDir('sb-stop-start-');
    cleanups.push(cleanup);
    const port = await freePort();
    const { app, config, cycles } = await startingApp(dir, port);
    // The store's start waits until the stop has been asked for, as a slow disk or database would.
    const open = app.store.start.bind(app.store);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let opening = false;
    app.store.start = async () => {
      opening = true;
      await gate;
      await open();
    };
    const starting = app.start();
    await vi.waitFor(() => expect(opening).toBe(true));
    const stopping = app.stop();
    release();
    await starting;
    await stopping;

    expect(await accepts(port)).toBe(false);
    expect(cycles).toEqual([]);
    expect(app.upstream.lastContact()).toBeUndefined();
    expect(app.sandbox!.control.requestCount('GET', '/api/v2/students')).toBe(0);
    expect(app.sandbox!.control.requestCount('POST', '/api/v2/webhook')).toBe(0);
    // The store that opened was closed again: another process can open it.
    const next = await createApp({ config: configSchema.parse({ ...config, server: { host: '127.0.0.1', port: 0 } }), log: pino({ level: 'silent' }), mode: 'oneshot' });
    await next.start();
    await next.stop();
  });

  it('cancels the PostgreSQL store\'s wait for a database that does not answer: the start ends at once', async () => {
    const port = await freePort();
    // Nothing listens on the port: the store waits for it a second at a time, for up to 30 s. This
    // clock's waits end only when cancelled, so the start ends here only if the stop cancels it.
    const waits: number[] = [];
    const clock: Clock = {
      now: () => Date.now(),
      sleep: (ms, signal) =>
        new Promise((_resolve, reject) => {
          waits.push(ms);
          signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
        }),
    };
    const store = createPgStore({ url: `postgres://someone:secret@127.0.0.1:${port}/none`, log: pino({ level: 'silent' }), clock });
    const lifecycle = createLifecycle([store], pino({ level: 'silent' }));
    const starting = lifecycle.start();
    await vi.waitFor(() => expect(waits).toContain(1000));
    await lifecycle.stop();
    await expect(starting).resolves.toBeUndefined();
  });
});
