import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import { startAccountingReceiver, type AccountingReceiver } from './accounting-receiver.js';
import { freePort } from './support/net.js';
import { roleDatabase, testDatabase } from './support/pg-database.js';
import { tempDir } from './support/temp.js';

/**
 * `config check --connect` tries what the daemon needs, item by item: the store, the upstream with
 * the configured credentials, each connector's target (the /readyz checks); exit 1 if any fails.
 */
const BIN = path.resolve('bin/schoolbridge.js');
let dir: string;
let cleanup: () => Promise<void>;
let sandbox: Sandbox;
let receiver: AccountingReceiver;

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('sb-connect-'));
  sandbox = createSandbox({ students: 2, clientId: 'school-id', clientSecret: 'right-secret', log: pino({ level: 'silent' }) });
  await sandbox.start();
  receiver = await startAccountingReceiver();
  await writeFile(path.join(dir, 'a-file'), 'in the way');
});
afterAll(async () => {
  await sandbox?.stop();
  await receiver?.close();
  await cleanup?.();
});

async function check(name: string, lines: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const file = path.join(dir, `${name}.yaml`);
  await writeFile(file, lines.join('\n'));
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, '-c', file, 'config', 'check', '--connect'], (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const upstream = (secret: string) => `upstream: { baseUrl: "${sandbox.url}", clientId: school-id, clientSecret: ${secret} }`;

describe('config check --connect', () => {
  it('says ok for each item a working setup has, and exits 0', async () => {
    const url = await testDatabase('connect');
    const result = await check('good', [
      upstream('right-secret'),
      `store: { driver: postgres, url: "${url}" }`,
      'connectors:',
      `  - { name: files, type: file, streams: [students], dir: ${JSON.stringify(path.join(dir, 'out'))} }`,
      `  - { name: books, type: accounting, url: "${receiver.url}", secret: s, ledgerDir: ${JSON.stringify(path.join(dir, 'ledger'))} }`,
    ]);
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const lines = result.stdout.trim().split('\n').slice(1);
    expect(lines).toEqual([
      expect.stringMatching(/^ok {4}store: PostgreSQL \S+ at postgres:\/\/.* answers$/),
      `ok    upstream: ${sandbox.url} accepts upstream.clientId and upstream.clientSecret (0 webhook registrations)`,
      'ok    connectors[0] files (file): ready',
      'ok    connectors[1] books (accounting): ready',
    ]);
  });

  it('names what fails and what fixes it, each item on its own, and exits 1', async () => {
    const closed = await freePort();
    const result = await check('bad', [
      upstream('wrong-secret'),
      `store: { driver: postgres, url: "postgres://nobody:secret@127.0.0.1:${closed}/none" }`,
      'connectors:',
      `  - { name: files, type: file, streams: [students], dir: ${JSON.stringify(path.join(dir, 'a-file', 'out'))} }`,
      `  - { name: books, type: accounting, url: "http://127.0.0.1:${closed}/books", secret: s }`,
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('4 of 4 checks failed\n');
    const lines = result.stdout.trim().split('\n').slice(1);
    expect(lines[0]).toMatch(/^FAIL {2}store: cannot use the database at postgres:\/\/nobody:\*\*\*@127\.0\.0\.1:\d+\/none: .*; is PostgreSQL running there\? Else fix store\.url/);
    expect(lines[0]).not.toContain('secret');
    expect(lines[1]).toMatch(new RegExp(`^FAIL  upstream: ${sandbox.url}: it refuses the credentials: fix upstream\\.clientId and upstream\\.clientSecret \\(upstream\\.auth: `));
    expect(lines[2]).toMatch(/^FAIL {2}connectors\[0\] files \(file\): cannot make the directory .*a-file\/out: a file takes its path; set this connector's dir to a directory$/);
    expect(lines[3]).toMatch(/^FAIL {2}connectors\[1\] books \(accounting\): cannot reach http:\/\/127\.0\.0\.1:\d+: /);
  });
  it('names a certificate file of store.url that cannot be read, not a bare ENOENT', async () => {
    const missing = path.join(dir, 'no-such-ca.pem');
    const result = await check('ssl-file', [upstream('right-secret'), `store: { driver: postgres, url: "postgres://u:p@127.0.0.1:9/db?sslmode=verify-full&sslrootcert=${missing}" }`]);
    expect(result).toMatchObject({ code: 1, stderr: '1 of 2 checks failed\n' });
    expect(result.stdout).toContain(`FAIL  store: cannot use the database at postgres://u:***@127.0.0.1:9/db?sslmode=verify-full&sslrootcert=${missing}: store.url's sslrootcert=${missing} cannot be read (there is no such file): give the path of the file, readable by the daemon's user\n`);
  });

  it('fails a store whose role start would refuse, with the grant that fixes it', async () => {
    const { url, role, database } = await roleDatabase('connect_grants');
    const result = await check('grants', [upstream('right-secret'), `store: { driver: postgres, url: "${url}" }`]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(new RegExp(`FAIL {2}store: PostgreSQL \\S+ at postgres://${role}:\\*\\*\\*@.* answers, but "${role}" may not create the schema schoolbridge: GRANT CREATE ON DATABASE "${database}" TO "${role}", or create the schema schoolbridge owned by that role\n`));
  });

  it('never shows a password written in upstream.baseUrl, whether the upstream answers or not', async () => {
    const withPassword = sandbox.url.replace('http://', 'http://school-user:hunter2-secret@');
    const answers = await check('url-password', [`upstream: { baseUrl: "${withPassword}", clientId: school-id, clientSecret: right-secret }`, `store: { dir: ${JSON.stringify(path.join(dir, 'url-password'))} }`]);
    const refused = await check('url-password-down', [`upstream: { baseUrl: "http://school-user:hunter2-secret@127.0.0.1:${await freePort()}", clientId: school-id, clientSecret: right-secret }`, `store: { dir: ${JSON.stringify(path.join(dir, 'url-password-down'))} }`]);
    for (const result of [answers, refused]) {
      expect(result.stdout).toMatch(/^(ok|FAIL) +upstream: http:\/\/school-user:\*\*\*@127\.0\.0\.1:/m);
      expect(result.stdout + result.stderr).not.toContain('hunter2');
    }
    expect(refused.code).toBe(1);
  });

  it('tells an upstream that is down or busy from a wrong URL', async () => {
    const busy = createServer((_request, response) => response.writeHead(503, { 'retry-after': '600' }).end('<html>maintenance</html>'));
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(busy.address() as AddressInfo).port}`;
      const result = await check('busy', [`upstream: { baseUrl: "${url}", token: t0k3n, clientSecret: s }`, `store: { dir: ${JSON.stringify(path.join(dir, 'busy'))} }`]);
      expect(result.code).toBe(1);
      expect(result.stdout.trim().split('\n').slice(1)).toContain(
        `FAIL  upstream: ${url}: it is there but cannot answer now (HTTP 503): try again later (upstream.http: GET /api/v2/webhooks: upstream answered HTTP 503 (it asks to wait 10 min))`,
      );
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });

  it('names store.dir for the embedded sandbox too when a file takes its path', async () => {
    const taken = path.join(dir, 'a-file');
    const result = await check('taken', [`store: { dir: ${JSON.stringify(taken)} }`]);
    expect(result.code).toBe(1);
    const why = `store.dir: cannot make the directory ${taken}: it exists and is not a directory; set store.dir to a directory`;
    // This config has no connector: the warning that says so comes first.
    expect(result.stdout.trim().split('\n').slice(1)).toEqual([expect.stringMatching(/^# warning: connectors: none: /), `FAIL  store: ${why}`, `FAIL  upstream: the embedded sandbox: ${why}`]);
  });

  it('says which credentials the embedded sandbox took, and why it did not start, not that it answered wrong', async () => {
    const store = `store: { dir: ${JSON.stringify(path.join(dir, 'embedded'))} }`;
    const own = await check('own', ['upstream: { baseUrl: sandbox }', 'sandbox: { port: 0 }', store]);
    expect(own.stdout).toContain('ok    upstream: the embedded sandbox accepts its own credentials (none are set in upstream) (0 webhook registrations)\n');
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      const busy = await check('busy', ['upstream: { baseUrl: sandbox, clientId: a, clientSecret: b }', `sandbox: { port: ${port} }`, store]);
      expect(busy.code).toBe(1);
      expect(busy.stdout).toContain(`FAIL  upstream: the embedded sandbox: sandbox.port_in_use: cannot listen on 127.0.0.1:${port}: another process uses the port; stop it, or choose another with sandbox.port (0: any free port)\n`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
