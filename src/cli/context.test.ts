import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callAdmin } from './context.js';

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
