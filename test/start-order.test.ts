import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../src/app.js';
import { freePort } from './support/net.js';
import { startingApp } from './support/starting-app.js';
import { tempDir } from './support/temp.js';

/**
 * The order the daemon's parts start and stop in (src/app.ts): the server listens before the
 * schedules start and before the reconciler registers its URL upstream; a stop ends the reconciler
 * first, so that no webhook is registered upstream after the stop began, then the schedules, then
 * the server.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Records when each named part's start and stop are called. */
function watch(parts: Record<string, { start(): Promise<void>; stop(): Promise<void> }>): string[] {
  const calls: string[] = [];
  for (const [name, part] of Object.entries(parts)) {
    const { start, stop } = part;
    part.start = async () => {
      calls.push(`start ${name}`);
      await start.call(part);
    };
    part.stop = async () => {
      calls.push(`stop ${name}`);
      await stop.call(part);
    };
  }
  return calls;
}

describe('the order of the start and the stop', () => {
  it('starts the server, then the schedules, then the reconciler, and stops them the other way round', async () => {
    const { dir, cleanup } = await tempDir('sb-order-');
    cleanups.push(cleanup);
    const { app } = await startingApp(dir, await freePort());
    const calls = watch(partsOf(app));
    await app.start();
    await app.stop();
    expect(calls).toEqual(['start server', 'start schedules', 'start reconciler', 'stop reconciler', 'stop schedules', 'stop server']);
  });
});

function partsOf(app: App) {
  if (!app.server || !app.poll.scheduler) throw new Error('a daemon has a server and schedules');
  return { server: app.server, schedules: app.poll.scheduler, reconciler: app.webhooks.reconciler };
}
