import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LockInfo } from '../src/store/index.js';
import { eventually, freePort } from './support/net.js';
import { tempDir } from './support/temp.js';

/**
 * The commands beside a daemon holding the embedded store, as a new user runs them: read-only ones
 * need no admin token (they read the store beside the daemon, and talk to the daemon's own sandbox,
 * not to one of their own); `deliveries retry` through the daemon exits 1 unless all were delivered.
 */
const BIN = path.resolve('bin/schoolbridge.js');
const TOKEN = 'adm-beside-7c1d-5e0a9f3b2c8d';
let dir: string;
let cleanup: () => Promise<void>;
let daemon: ChildProcess;
let output = '';
let receiver: Server;
let status = 400;
let sandboxUrl: string;

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, '-c', path.join(dir, 'config.yaml'), ...args], { env: { ...process.env, SCHOOLBRIDGE_ADMIN_TOKEN: '', ...env } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const lines = async (file: string) => (await readFile(path.join(dir, 'out', file), 'utf8').catch(() => '')).split('\n').filter(Boolean);
const control = (method: string, route: string, body?: unknown) =>
  fetch(`${sandboxUrl}/_sandbox/${route}`, { method, ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}) }).then((r) => r.json());

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('sb-beside-'));
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(status).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = await freePort();
  await writeFile(path.join(dir, 'config.yaml'), [
    'upstream: { baseUrl: sandbox }',
    'sandbox: { students: 5, activity: false, retryTimeScale: 0.0001 }',
    `server: { host: 127.0.0.1, port: ${port}, adminToken: "\${SCHOOLBRIDGE_ADMIN_TOKEN:-}" }`,
    'poll: { schedule: "0 0 1 1 *", onStart: true }',
    'export: { onStart: false }',
    `store: { dir: ${JSON.stringify(path.join(dir, 'data'))} }`,
    'log: { level: info, pretty: false }',
    'connectors:',
    `  - { name: files, type: file, streams: [students, users, invoices], dir: ${JSON.stringify(path.join(dir, 'out'))} }`,
    `  - { name: hook, type: webhook, streams: [invoices, roster], url: "http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook", secret: s }`,
  ].join('\n'));
  daemon = spawn(process.execPath, [BIN, '-c', path.join(dir, 'config.yaml'), 'start'], { env: { ...process.env, SCHOOLBRIDGE_ADMIN_TOKEN: TOKEN }, stdio: ['ignore', 'ignore', 'pipe'] });
  daemon.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await eventually(async () => ((await lines('students.jsonl')).length === 5 ? true : undefined), 60_000, () => `the first cycle's students (${output.slice(-500)})`);
  await eventually(async () => {
    const status = (await (await fetch(`http://127.0.0.1:${port}/status.json`)).json()) as { webhooks: { state: string } };
    return status.webhooks.state.startsWith('converged') ? true : undefined;
  }, 30_000, 'the registrations');
  sandboxUrl = (JSON.parse(await readFile(path.join(dir, 'data', 'schoolbridge.holder.json'), 'utf8')) as LockInfo).sandboxUrl!;
}, 90_000);

afterAll(async () => {
  if (daemon && daemon.exitCode === null && daemon.signalCode === null) daemon.kill('SIGKILL');
  await new Promise((resolve) => receiver?.close(resolve));
  await cleanup?.();
});

describe('commands beside a running daemon on the embedded store', () => {
  it('read without an admin token, talk to its sandbox, and retry through it with the right exit code', async () => {
    expect(sandboxUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    // The daemon's registrations, not "no registrations" from a sandbox of the command's own.
    const listed = await cli(['webhooks', 'list']);
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    expect(listed.stdout).toMatch(/ours +invoice\.created/);
    expect(listed.stdout).toMatch(/ours +invoice\.updated/);

    // A change in the daemon's school: the dry run sees it (against the snapshot the daemon keeps).
    await control('POST', 'students', {});
    const dry = await cli(['sync', '--dry-run', '--json']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({ outcome: 'ok', dryRun: true, streams: { students: { created: 1, updated: 0, deleted: 0 }, users: { created: 2 } } });
    expect(await lines('students.jsonl')).toHaveLength(5);

    // An invoice the receiver refuses: dead, listed beside the daemon.
    await control('POST', 'invoices', {});
    const dead = await eventually(async () => {
      const result = await cli(['deliveries', 'list', '--state', 'dead', '--json']);
      expect(result.code, result.stderr).toBe(0);
      const entries = JSON.parse(result.stdout) as { id: string }[];
      return entries.length === 1 ? entries : undefined;
    }, 30_000, 'a dead delivery');
    expect(dead[0]!.id).toMatch(/^hook:invoices:invoice\.created:/);
    expect(await cli(['events', 'quarantine', 'list'])).toMatchObject({ code: 0, stdout: 'quarantine is empty\n' });

    // Removing a registration beside the daemon removes it from the daemon's upstream.
    const hooks = JSON.parse((await cli(['webhooks', 'list', '--json'])).stdout) as { id: number; event: string; ours: boolean }[];
    // Each marked as the text marks it: the daemon's own registrations.
    expect(hooks.map((h) => [h.event, h.ours])).toEqual([['invoice.created', true], ['invoice.updated', true]]);
    const updated = hooks.find((h) => h.event === 'invoice.updated')!;
    expect(await cli(['webhooks', 'delete', String(updated.id)])).toMatchObject({ code: 0 });
    expect(((await control('GET', 'webhooks')) as { event: string }[]).map((h) => h.event)).toEqual(['invoice.created']);

    // Retry through the daemon: still refused, exit 1; accepted, exit 0.
    const refused = await cli(['deliveries', 'retry', '--all-dead'], { SCHOOLBRIDGE_ADMIN_TOKEN: TOKEN });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(`dead       ${dead[0]!.id}`);
    expect(refused.stderr).toBe('1 of 1 not delivered (see: schoolbridge deliveries list)\n');
    // An id it does not know: what the daemon said, not its JSON.
    expect(await cli(['deliveries', 'retry', 'files:nope'], { SCHOOLBRIDGE_ADMIN_TOKEN: TOKEN })).toMatchObject({
      code: 1, stdout: '', stderr: 'the daemon answered 404 to /admin/deliveries/retry: no delivery "files:nope"\n',
    });
    // A connector it has not got: what the daemon said, as for an id (in-process: the same message).
    const noConnector = 'no connector "nope" in the config, and nothing owed to one of that name (connectors: files, hook)';
    expect(await cli(['deliveries', 'retry', '--all-dead', '--connector', 'nope'], { SCHOOLBRIDGE_ADMIN_TOKEN: TOKEN })).toMatchObject({
      code: 1, stdout: '', stderr: `the daemon answered 404 to /admin/deliveries/retry: ${noConnector}\n`,
    });
    expect(await cli(['deliveries', 'list', '--connector', 'nope'], { SCHOOLBRIDGE_ADMIN_TOKEN: TOKEN })).toMatchObject({
      code: 1, stdout: '', stderr: `the daemon answered 404 to /admin/deliveries/list: ${noConnector}\n`,
    });
    // Another token than the daemon's: said so, not as "401".
    const wrongToken = await cli(['deliveries', 'retry', '--all-dead'], { SCHOOLBRIDGE_ADMIN_TOKEN: `other-${TOKEN}` });
    expect(wrongToken).toMatchObject({ code: 1, stdout: '' });
    expect(wrongToken.stderr).toMatch(/ holds the store and refused this config's server\.adminToken: give both the same token, or stop it and run the command again\n$/);
    status = 200;
    const accepted = await cli(['deliveries', 'retry', dead[0]!.id], { SCHOOLBRIDGE_ADMIN_TOKEN: TOKEN });
    expect(accepted).toMatchObject({ code: 0, stdout: `delivered  ${dead[0]!.id}\n` });

    // Its holder file removed while it runs: who holds the store is not known, and the message says why.
    const holderFile = path.join(dir, 'data', 'schoolbridge.holder.json');
    await rename(holderFile, `${holderFile}.aside`);
    const unknown = await cli(['deliveries', 'retry', '--all-dead'], { SCHOOLBRIDGE_ADMIN_TOKEN: TOKEN });
    expect(unknown).toMatchObject({ code: 1, stdout: '' });
    expect(unknown.stderr).toBe('a process that left no schoolbridge.holder.json (removed while it ran? restarting the daemon writes it again) holds the store but has no admin API address\n');
    // What only reads does so beside it all the same, with the token or without.
    const besideList = await cli(['deliveries', 'list', '--json'], { SCHOOLBRIDGE_ADMIN_TOKEN: TOKEN });
    expect(besideList.code, besideList.stderr).toBe(0);
    expect(JSON.parse(besideList.stdout)).toEqual([]);
    expect(await cli(['events', 'quarantine', 'list'], { SCHOOLBRIDGE_ADMIN_TOKEN: TOKEN })).toMatchObject({ code: 0, stdout: 'quarantine is empty\n' });
    await rename(`${holderFile}.aside`, holderFile);

    // An export through the daemon waits for the roster's deliveries as one in-process does: one
    // the receiver refuses is named, with its error and what to do, and the command exits 1.
    status = 400;
    const notLanded = await cli(['export', 'roster'], { SCHOOLBRIDGE_ADMIN_TOKEN: TOKEN });
    expect(notLanded.code).toBe(1);
    expect(notLanded.stdout).toMatch(/^roster \d{4}-\d{2}-\d{2}: 6 students, not delivered to hook \(roster:/);
    expect(notLanded.stderr).toMatch(/^the roster was not delivered to: hook, dead \(webhook\.rejected: the receiver answered 400[^)]*\): schoolbridge deliveries retry hook:roster:\S+\n$/);
    // Received now, but the same roster's delivery is still dead: this export did not land either.
    status = 200;
    const stillDead = await cli(['export', 'roster'], { SCHOOLBRIDGE_ADMIN_TOKEN: TOKEN });
    expect(stillDead.code, stillDead.stderr).toBe(1);
    expect(stillDead.stderr).toMatch(/^the roster was not delivered to: hook, dead/);
    const rosterId = /hook:roster:\S+/.exec(stillDead.stderr)![0];
    // A changed roster waits behind the dead one: named at once as waiting, not waited for.
    await control('POST', 'students', {});
    const waiting = await cli(['export', 'roster'], { SCHOOLBRIDGE_ADMIN_TOKEN: TOKEN });
    expect(waiting.code).toBe(1);
    expect(waiting.stderr).toMatch(/^the roster was not delivered to: hook, waiting behind an earlier delivery of the roster/);
    expect(await cli(['deliveries', 'retry', rosterId], { SCHOOLBRIDGE_ADMIN_TOKEN: TOKEN })).toMatchObject({ code: 0, stdout: `delivered  ${rosterId}\n` });
    await eventually(async () => ((await cli(['deliveries', 'list', '--json'])).stdout.includes('hook:roster:') ? undefined : true), 30_000, 'the waiting roster delivered');
    const delivered = await cli(['export', 'roster'], { SCHOOLBRIDGE_ADMIN_TOKEN: TOKEN });
    expect(delivered).toMatchObject({ code: 0, stderr: '' });

    // A poll that fails through the daemon: the admin API answers with its error's status, code and
    // message, and the command prints what it prints in-process and exits 1.
    await control('POST', 'faults', { kind: 'status', status: 500, route: 'GET /api/v2/students', times: 'always' });
    const failedSync = await fetch(`${JSON.parse(await readFile(holderFile, 'utf8')).adminUrl as string}/admin/sync`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(failedSync.status).toBe(500);
    expect(await failedSync.json()).toMatchObject({ error: 'upstream.http', message: expect.stringContaining('answered HTTP 500'), outcome: 'failed', reason: 'upstream.http' });
    const syncCli = await cli(['sync'], { SCHOOLBRIDGE_ADMIN_TOKEN: TOKEN });
    expect(syncCli.code).toBe(1);
    expect(syncCli.stderr).toMatch(/^sync failed: upstream\.http: GET \/api\/v2\/students: upstream answered HTTP 500/);
    await control('DELETE', 'faults');

    daemon.kill('SIGTERM');
    expect(await new Promise((resolve) => daemon.once('exit', resolve))).toBe(0);
  });
});
