import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../src/sandbox/index.js';
import { signatureHeader } from '../src/signature/sign.js';
import { eventually, freePort } from './support/net.js';
import { testDatabase } from './support/pg-database.js';
import { tempDir } from './support/temp.js';

/**
 * Every command of the executable with `store.driver: postgres`, run beside a daemon on the same
 * database (the database arbitrates; no admin API involved): sync, its dry run, the roster export,
 * webhook registrations, deliveries listed and retried, quarantine listed and released, an event
 * reprocessed, config check. The daemon then stops on SIGTERM with 0.
 */
const BIN = path.join(import.meta.dirname, '..', 'bin', 'schoolbridge.js');
const SECRET = 'cli-pg-secret';
let sandbox: Sandbox;
let receiver: Server;
let receiverStatus = 400;
const received: string[] = [];
let dir: string;
let cleanup: () => Promise<void>;
let daemon: ChildProcess;
let daemonOutput = '';
let port: number;

function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, '-c', path.join(dir, 'config.yaml'), ...args], { env: { ...process.env, NODE_NO_WARNINGS: '1' } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

async function ok(...args: string[]): Promise<string> {
  const result = await cli(...args);
  expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
  return result.stdout;
}

async function postWebhook(body: string, timestamp = Math.floor(Date.now() / 1000)): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}/webhooks/v2`, {
    method: 'POST', body, headers: { 'content-type': 'application/json', 'webhook-signature': signatureHeader(SECRET, body, timestamp) },
  });
  await response.arrayBuffer();
  return response.status;
}

const lines = async (file: string) => (await readFile(file, 'utf8').catch(() => '')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id: string });

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('schoolbridge-cli-pg-'));
  sandbox = createSandbox({ students: 12, seed: 5, clientSecret: SECRET, log: pino({ level: 'silent' }) });
  await sandbox.start();
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push(`${receiverStatus} ${String(req.headers['idempotency-key'])}`);
      res.writeHead(receiverStatus).end(`status ${receiverStatus}`);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  port = await freePort();
  const url = await testDatabase('cli');
  await writeFile(
    path.join(dir, 'config.yaml'),
    [
      `upstream: { baseUrl: ${JSON.stringify(sandbox.url)}, clientId: sandbox-client, clientSecret: ${SECRET} }`,
      `server: { host: 127.0.0.1, port: ${port}, publicUrl: "http://127.0.0.1:${port}" }`,
      'webhooks: { events: [invoice.created], reconcileOnStart: false }',
      'poll: { schedule: "0 0 1 1 *", onStart: false }',
      'export: { schedule: "0 0 1 1 *", onStart: false }',
      `store: { driver: postgres, url: ${JSON.stringify(url)}, poolSize: 4 }`,
      'log: { level: info, pretty: false }',
      'connectors:',
      `  - { name: files, type: file, streams: [students, users, invoices, events, roster], dir: ${JSON.stringify(path.join(dir, 'out'))} }`,
      `  - { name: hook, type: webhook, streams: [invoices], url: "http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook", secret: hook-secret }`,
    ].join('\n'),
  );
  daemon = spawn(process.execPath, [BIN, '-c', path.join(dir, 'config.yaml'), 'start'], { stdio: ['ignore', 'pipe', 'pipe'] });
  daemon.stdout!.on('data', (chunk: Buffer) => (daemonOutput += chunk.toString()));
  daemon.stderr!.on('data', (chunk: Buffer) => (daemonOutput += chunk.toString()));
  await eventually(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)) || undefined, 30_000, `the daemon to listen: ${daemonOutput}`);
}, 60_000);

afterAll(async () => {
  if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill('SIGKILL');
  await sandbox?.stop();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
  await cleanup?.();
});

describe('the CLI on store.driver: postgres, beside a running daemon', () => {
  // Each command is a process of its own that loads the sources: a wider bound than the suite's.
  it('runs every command against the database', async () => {
    expect(await ok('config', 'check')).toMatch(/driver: postgres/);

    // A dry run predicts; it writes and delivers nothing.
    type Summary = { outcome: string; dryRun?: boolean; streams: Record<string, { created: number; updated: number; deleted: number }> };
    const predicted = JSON.parse(await ok('sync', '--dry-run', '--json')) as Summary;
    expect(predicted).toMatchObject({ outcome: 'ok', dryRun: true, streams: { students: { created: 12 } } });
    expect(await lines(path.join(dir, 'out', 'students.jsonl'))).toEqual([]);

    // A poll cycle by the CLI: it delivers what it produces before it exits.
    const summary = JSON.parse(await ok('sync', '--json')) as Summary;
    expect(summary.outcome).toBe('ok');
    expect(summary.streams.students!.created).toBe(12);
    expect(await lines(path.join(dir, 'out', 'students.jsonl'))).toHaveLength(12);
    const after = JSON.parse(await ok('sync', '--dry-run', '--json')) as Summary;
    expect(Object.values(after.streams).every((c) => c.created + c.updated + c.deleted === 0)).toBe(true);

    await ok('export', 'roster');
    expect((await readdir(path.join(dir, 'out'))).some((f) => /^roster-\d{4}-\d{2}-\d{2}\.csv$/.test(f))).toBe(true);

    expect(await ok('webhooks', 'reconcile', '--dry-run')).toContain('invoice.created');
    await ok('webhooks', 'reconcile');
    expect(await ok('webhooks', 'list')).toContain(`http://127.0.0.1:${port}/webhooks/v2`);
    const registered = JSON.parse(await ok('webhooks', 'list', '--json')) as { id: string | number }[];
    expect(registered).toHaveLength(1);
    await ok('webhooks', 'delete', String(registered[0]!.id));
    expect(JSON.parse(await ok('webhooks', 'list', '--json'))).toEqual([]);
    await ok('webhooks', 'reconcile');

    // An event taken by the daemon: the file gets it, the receiver answers 400, so it is dead.
    expect(await postWebhook(JSON.stringify({ event: 'invoice.created', object: { id: 4242, userId: 1, number: 'FV 1/11' } }))).toBe(200);
    const invoices = await eventually(async () => ((await lines(path.join(dir, 'out', 'invoices.jsonl'))).length === 1 ? lines(path.join(dir, 'out', 'invoices.jsonl')) : undefined), 20_000, 'the invoice in the file');
    const dead = await eventually(async () => {
      const listed = JSON.parse(await ok('deliveries', 'list', '--state', 'dead', '--json')) as { id: string }[];
      return listed.length === 1 ? listed : undefined;
    }, 20_000, 'a dead delivery');
    expect(dead[0]!.id).toBe(`hook:${invoices[0]!.id}`);
    receiverStatus = 200;
    await ok('deliveries', 'retry', dead[0]!.id);
    await eventually(() => received.includes(`200 ${invoices[0]!.id}`) || undefined, 20_000, 'the retried delivery');
    await eventually(async () => (JSON.parse(await ok('deliveries', 'list', '--json')) as unknown[]).length === 0 || undefined, 20_000, 'an empty outbox');

    // A correctly signed but stale delivery is held; released by the CLI, it is stored and delivered.
    expect(await postWebhook(JSON.stringify({ event: 'invoice.created', object: { id: 4343, userId: 1 } }), Math.floor(Date.now() / 1000) - 3600)).toBe(401);
    const held = JSON.parse(await ok('events', 'quarantine', 'list', '--json')) as { id: string }[];
    expect(held).toHaveLength(1);
    expect(await ok('events', 'quarantine', 'release', held[0]!.id)).toMatch(/^released /);
    expect(JSON.parse(await ok('events', 'quarantine', 'list', '--json'))).toEqual([]);

    expect(await ok('events', 'reprocess', invoices[0]!.id)).toMatch(/re-emitted .* as .*:r1/);
    await eventually(async () => ((await lines(path.join(dir, 'out', 'invoices.jsonl'))).length === 3 || undefined), 20_000, 'the released and the reprocessed invoice in the file');

    daemon.kill('SIGTERM');
    const code = await new Promise<number | null>((resolve) => daemon.once('exit', resolve));
    expect(code, daemonOutput.slice(-2000)).toBe(0);
  }, 180_000);
});
