import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { Agent } from 'undici';
import { webhookConnector } from '../connectors/webhook/index.js';
import { systemClock } from '../src/clock.js';
import { createMetricsRegistry } from '../src/metrics.js';
import { createOutbox } from '../src/outbox/index.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { change, nextEvent } from './support/outbox.js';

/** `deliveries list` / `deliveries retry` against a real store directory: a 400 is dead at once, and the CLI retries it. */
const BIN = path.join(import.meta.dirname, '..', 'bin', 'schoolbridge.js');
let dir: string;
let server: Server;
let status = 400;
const keys: string[] = [];
const record = change('students', 7, 'created');
const id = `hook:${record.id}`;

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return cliWith('config.yaml', ...args);
}

function cliWith(config: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, '-c', path.join(dir, config), ...args], { env: { ...process.env, NODE_NO_WARNINGS: '1' } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'schoolbridge-cli-'));
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'POST') keys.push(String(req.headers['idempotency-key']));
      res.writeHead(req.method === 'POST' ? status : 200).end(`status ${status}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const storeDir = path.join(dir, 'data');
  const configWith = (name: string) => [
    'upstream: { baseUrl: "http://127.0.0.1:9", token: x }',
    'webhooks: { events: [] }',
    `store: { dir: ${JSON.stringify(storeDir)} }`,
    'connectors:',
    `  - { name: ${name}, type: webhook, streams: [students], url: ${JSON.stringify(url)}, secret: s3cret }`,
  ].join('\n');
  await writeFile(path.join(dir, 'config.yaml'), configWith('hook'));
  // The same store with the connector renamed: `hook` is no longer in the config.
  await writeFile(path.join(dir, 'renamed.yaml'), configWith('other'));

  // A delivery the receiver rejects with 400: dead at once, stored in the config's store directory.
  const log = pino({ level: 'silent' });
  const store = createSqliteStore({ dir: storeDir, log, clock: systemClock });
  await store.start();
  const dispatcher = new Agent();
  const config = { name: 'hook', type: 'webhook', streams: ['students'] as const, url, secret: 's3cret', headers: {}, timeoutMs: 5000 };
  const outbox = createOutbox({
    store: store.outbox, connectors: [{ name: 'hook', streams: ['students'], config: config as never, connector: webhookConnector }],
    delivery: { maxAgeHours: 72, backoff: { baseMs: 1000, maxMs: 60_000 } },
    clock: systemClock, dispatcher, log, metrics: createMetricsRegistry(), checkIntervalMs: 0,
  });
  await outbox.start();
  const dead = nextEvent(outbox, 'dead');
  await outbox.enqueue([record]);
  await dead;
  await outbox.stop();
  // The CLI opens the embedded store itself: it must not be held by this process.
  await store.stop();
  await dispatcher.close();
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe('deliveries CLI', () => {
  it('lists the dead delivery, retries it, and then has nothing left', async () => {
    expect(keys).toEqual([record.id]);

    const listed = await cli('deliveries', 'list', '--state', 'dead');
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).toContain('webhook.rejected: the receiver answered 400');
    expect(listed.stdout).toContain('1 delivery (1 dead;');

    const missing = await cli('deliveries', 'retry', 'hook:nope');
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe('no delivery "hook:nope" (see: schoolbridge deliveries list)');

    // With `hook` out of the config nothing would deliver it: no retry puts it back to pending.
    const why = 'connector "hook" is not in the config: its deliveries are kept, but nothing delivers them; add it back to the config to retry them';
    // (Each run also logs at start that deliveries of connectors no longer configured are kept.)
    const all = await cliWith('renamed.yaml', 'deliveries', 'retry', '--all-dead');
    expect(all).toMatchObject({ code: 1, stdout: `kept       1 dead of connector hook  (${why})\n` });
    expect(all.stderr).toMatch(/\n1 dead delivery of connectors not in the config kept, not retried \(see: schoolbridge deliveries list\)\n$/);
    for (const args of [['--all-dead', '--connector', 'hook'], [id]]) {
      const refused = await cliWith('renamed.yaml', 'deliveries', 'retry', ...args);
      expect(refused).toMatchObject({ code: 1, stdout: '' });
      expect(refused.stderr.endsWith(`\nschoolbridge: ${why}\n`)).toBe(true);
    }
    expect((await cli('deliveries', 'list', '--state', 'dead', '--json')).stdout).toContain('"attempts": 1');
    expect(keys).toEqual([record.id]);

    status = 200;
    const retried = await cli('deliveries', 'retry', '--all-dead');
    expect(retried).toMatchObject({ code: 0, stdout: `delivered  ${id}\n` });
    expect(keys).toEqual([record.id, record.id]);

    expect(await cli('deliveries', 'list', '--json')).toMatchObject({ code: 0, stdout: '[]\n' });
  });

  it('a read-only command finding no store says so, and makes none', async () => {
    const elsewhere = path.join(dir, 'elsewhere');
    const config = path.join(dir, 'elsewhere.yaml');
    await writeFile(config, `upstream: { baseUrl: "http://127.0.0.1:9", token: x }\nwebhooks: { events: [] }\nstore: { dir: ${JSON.stringify(elsewhere)} }\n`);
    const run = (...args: string[]) => new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(process.execPath, [BIN, '-c', config, ...args], { env: { ...process.env, NODE_NO_WARNINGS: '1' } }, (error, _stdout, stderr) =>
        resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }));
    });
    const line = `no store in ${elsewhere} (store.dir): nothing has run with this config there yet; is store.dir right, and relative to this directory?\n`;
    expect(await run('deliveries', 'list')).toEqual({ code: 1, stderr: line });
    expect(await run('events', 'quarantine', 'list')).toEqual({ code: 1, stderr: line });
    expect(existsSync(elsewhere)).toBe(false);
  });

  it('usage errors exit 1 with one line', async () => {
    expect(await cli('deliveries', 'retry')).toMatchObject({ code: 1, stderr: 'name one delivery id, or pass --all-dead\n' });
    expect(await cli('deliveries', 'retry', 'hook:x', '--all-dead')).toMatchObject({ code: 1, stderr: 'name one delivery id or pass --all-dead, not both\n' });
    const unknown = 'no connector "nope" in the config, and nothing owed to one of that name (connectors: hook)\n';
    expect(await cli('deliveries', 'list', '--connector', 'nope')).toMatchObject({ code: 1, stderr: unknown });
    expect(await cli('deliveries', 'retry', '--all-dead', '--connector', 'nope')).toMatchObject({ code: 1, stderr: unknown });
    expect(await cli('deliveries', 'list', '--connector', 'hook')).toMatchObject({ code: 0 });
  });
});
