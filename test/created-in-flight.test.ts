import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { awaitDeliveries } from '../src/cli/context.js';
import { configSchema } from '../src/config/schema.js';
import { testDatabase } from './support/pg-database.js';
import { tempDir } from './support/temp.js';

/**
 * A first cycle's created changes in flight to a receiver while the next cycle commits: that cycle
 * makes rows of what the first still owes before it changes the snapshot, and the batch in flight
 * settles those rows. Each change reaches the receiver once, whatever the engine.
 */
const log = pino({ level: 'silent' });
const ends: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const end of ends.splice(0).reverse()) await end();
});

/** A receiver that holds its first request until `release()`, and keeps every Idempotency-Key it got. */
async function holdingReceiver() {
  const keys: string[] = [];
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      keys.push(String(req.headers['idempotency-key']));
      if (keys.length === 1) void released.then(() => res.writeHead(200).end());
      else res.writeHead(200).end();
    });
  });
  const first = once(server, 'request');
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  ends.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, keys, release, first };
}

describe.each(['sqlite', 'postgres'] as const)("a first cycle's batch in flight while the next cycle commits, on %s", (driver) => {
  it('delivers each created change once, and the change after it', async () => {
    const dir = await tempDir('schoolbridge-in-flight-');
    ends.push(() => dir.cleanup());
    const receiver = await holdingReceiver();
    const store = driver === 'sqlite' ? { dir: path.join(dir.dir, 'store') } : { driver, url: await testDatabase('inflight'), dir: path.join(dir.dir, 'store') };
    const app: App = await createApp({
      config: configSchema.parse({
        upstream: { baseUrl: 'sandbox' },
        sandbox: { students: 8, seed: 5 },
        server: { port: 0 },
        webhooks: { reconcileOnStart: false },
        store,
        connectors: [{ name: 'hook', type: 'webhook', streams: ['students'], url: receiver.url, secret: 'whsec-test' }],
      }),
      log, mode: 'oneshot',
    });
    ends.push(() => app.stop());
    await app.start();
    expect((await app.poll.sync()).outcome).toBe('ok');
    await receiver.first;
    const student = app.sandbox!.control.students()[0]!;
    app.sandbox!.control.updateStudent(student.id, { city: 'Sopot' });
    // The first batch is still in flight: this cycle makes rows of what the first one owes.
    expect((await app.poll.sync()).streams.students).toMatchObject({ updated: 1 });
    receiver.release();
    expect(await awaitDeliveries(app)).toBe(0);
    expect(receiver.keys).toHaveLength(9);
    expect(new Set(receiver.keys).size).toBe(9);
    expect(receiver.keys.filter((key) => key.startsWith(`students:${student.id}:`))).toHaveLength(2);
  });
});
