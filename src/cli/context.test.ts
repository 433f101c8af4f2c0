import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../app.js';
import { awaitDeliveries, callAdmin } from './context.js';

/** A daemon started without server.adminToken has no /admin routes: fastify's own 404 for them. */
const daemon = Fastify();
let adminUrl: string;
beforeAll(async () => {
  adminUrl = await daemon.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await daemon.close();
});

describe('callAdmin', () => {
  it('says that the daemon runs without an admin token, not that it answered 404', async () => {
    const holder = { pid: 4242, host: 'here', startedAt: '2026-11-30T10:00:00.000Z', adminUrl };
    await expect(callAdmin(holder, 'a-token-of-twenty-four-chars', '/admin/sync')).rejects.toMatchObject({
      exitCode: 1,
      message: 'the daemon (pid 4242, since 2026-11-30T10:00:00.000Z) holds the store and runs without server.adminToken, so its admin API is off: give it this config\'s server.adminToken (and restart it), or stop it and run the command again',
    });
  });
});

/**
 * A command's app beside a replica that delivers its one delivery: due until the command's first read
 * of the store, then in flight (claimed by the replica) for a few reads, then done.
 */
function besideReplica(readsInFlight: number): App {
  let state: 'due' | 'active' | 'done' = 'due';
  let reads = 0;
  const read = <T>(answer: () => T): T => {
    const seen = answer();
    reads += 1;
    if (state === 'due') state = 'active';
    else if (state === 'active' && reads > readsInFlight) state = 'done';
    return seen;
  };
  const fake = {
    config: { connectors: [{ name: 'files' }] },
    store: {
      shared: true,
      outbox: { nextRunAt: async () => read(() => (state === 'due' ? Date.now() - 1 : state === 'active' ? Date.now() + 60_000 : undefined)) },
    },
    outbox: {
      whenIdle: async () => {},
      list: async () => read(() => (state === 'active' ? [{ id: 'files:roster' }] : [])),
      counts: async () => new Map([['files', { depth: state === 'done' ? 0 : 1, dead: 0 }]]),
    },
  };
  return fake as unknown as App;
}

describe('awaitDeliveries beside replicas', () => {
  it('waits for a delivery that a replica claims between its reads until it is done', async () => {
    expect(await awaitDeliveries(besideReplica(4), 30_000)).toBe(0);
  });
});
