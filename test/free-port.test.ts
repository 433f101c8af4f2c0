import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from './support/net.js';

/** The first port of the kernel's ephemeral range, where Linux says it. */
const ephemeralLow = async () => {
  const text = await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').catch(() => undefined);
  return text === undefined ? undefined : Number(text.trim().split(/\s+/)[0]);
};

describe('freePort (test/support/net.ts)', () => {
  it("draws ports below the kernel's ephemeral range, which no connection of the suites running beside is given", async () => {
    const low = await ephemeralLow();
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(1024);
      if (low !== undefined) expect(port).toBeLessThan(low);
    }
    // And one of them takes a listener, as a child's server would.
    const server = createServer();
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(ports[0], '127.0.0.1', resolve));
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
