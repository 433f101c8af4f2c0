import { afterAll } from 'vitest';

/**
 * A guard against leaked servers: when a test file ends, after its own hooks, no TCP
 * server it started may still listen. Timers are not counted: libraries keep harmless unref'd ones.
 */
afterAll(async () => {
  // A closed server's handle is released on the next turn of the loop.
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, 10));
  const servers = process.getActiveResourcesInfo().filter((kind) => kind === 'TCPServerWrap' || kind === 'PipeServerWrap');
  if (servers.length > 0) throw new Error(`this test file left ${servers.length} server(s) listening: close them in afterEach/afterAll`);
});
