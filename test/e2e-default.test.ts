import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually, freePort } from './support/net.js';
import { tempDir } from './support/temp.js';

const BIN = path.resolve('bin/schoolbridge.js');
const children: ChildProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function jsonLines(file: string): Promise<Record<string, unknown>[] | undefined> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const lines = text.split('\n').filter(Boolean);
  return lines.length > 0 ? lines.map((line) => JSON.parse(line) as Record<string, unknown>) : undefined;
}

describe('npm start on the embedded default', () => {
  it('fills students, users and invoices under data/out, writes a roster, and stops on SIGTERM with 0', async () => {
    const { dir, cleanup } = await tempDir('schoolbridge-e2e-');
    cleanups.push(cleanup);
    const port = await freePort();
    // A new user's shell: the daemon's own folder is elsewhere, so the embedded default is used.
    // Secrets passed the documented way (environment); debug logs on, so as much as possible is logged.
    const secrets = { SCHOOLBRIDGE_CLIENT_SECRET: 'cs-e2e-7f3a9c', SCHOOLBRIDGE_ADMIN_TOKEN: 'adm-e2e-51d0e2-7c4a19b3f8e6' };
    const child = spawn(process.execPath, [BIN, 'start', '--verbose'], {
      cwd: dir,
      env: { ...process.env, ...secrets, SCHOOLBRIDGE_PORT: String(port), SCHOOLBRIDGE_CONFIG: '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

    const health = await eventually(async () => {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
      return response?.status === 200 ? response.status : undefined;
    }, 20_000, `/healthz (stderr: ${stderr.slice(-500)})`);
    expect(health).toBe(200);

    const out = path.join(dir, 'data', 'out');
    const students = await eventually(() => jsonLines(path.join(out, 'students.jsonl')), 60_000, 'students.jsonl');
    const users = await eventually(() => jsonLines(path.join(out, 'users.jsonl')), 60_000, 'users.jsonl');
    const invoices = await eventually(() => jsonLines(path.join(out, 'invoices.jsonl')), 60_000, 'invoices.jsonl');
    const roster = await eventually(async () => (await readdir(out)).find((f) => /^roster-\d{4}-\d{2}-\d{2}\.csv$/.test(f)), 60_000, 'a roster CSV');

    for (const record of students) {
      expect(record).toMatchObject({ stream: 'students', op: expect.stringMatching(/^(created|updated|deleted)$/) });
      expect(record.id).toMatch(/^students:\d+:/);
      expect(JSON.stringify(record)).not.toContain('oneTimePassword');
    }
    expect(students.length).toBeGreaterThanOrEqual(40);
    expect(users.every((r) => r.stream === 'users')).toBe(true);
    expect(invoices.every((r) => r.stream === 'invoices' && typeof r.event === 'string' && r.event.startsWith('invoice.'))).toBe(true);
    const csv = await readFile(path.join(out, roster), 'utf8');
    expect(csv.split('\r\n')[0]).toContain('Student ID');
    expect(csv.split('\r\n').filter(Boolean).length).toBeGreaterThan(40);

    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toContain('schoolbridge_');
    // The store's own speed: by now it has committed and synced what was delivered.
    expect(metrics).toMatch(/^schoolbridge_store_transaction_seconds_count\{engine="sqlite"\} [1-9]/m);
    expect(metrics).toMatch(/^schoolbridge_store_sync_seconds_count\{engine="sqlite"\} [1-9]/m);
    // Each thread's heap: the main thread's, the database thread's, and the list workers' (the poll ran).
    for (const thread of ['main', 'database', 'list:students', 'list:users']) {
      expect(metrics).toMatch(new RegExp(`^schoolbridge_thread_heap_used_bytes\\{thread="${thread}"\\} [1-9]`, 'm'));
    }

    // The admin API: 401 without the token, the work done with it.
    const admin = `http://127.0.0.1:${port}/admin/sync`;
    expect((await fetch(admin, { method: 'POST' })).status).toBe(401);
    const synced = await fetch(admin, { method: 'POST', headers: { authorization: `Bearer ${secrets.SCHOOLBRIDGE_ADMIN_TOKEN}` } });
    expect(synced.status).toBe(200);
    expect(await synced.json()).toMatchObject({ outcome: 'ok' });

    const stopAt = Date.now();
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(Date.now() - stopAt).toBeLessThan(10_000);

    // Nothing secret in a whole run's logs, debug level included.
    expect(stderr).toContain('"component":"outbox"');
    for (const secret of Object.values(secrets)) expect(stderr).not.toContain(secret);
    expect(stderr).not.toMatch(/Bearer [A-Za-z0-9]/);
    expect(stderr).not.toContain('oneTimePassword":"');
  }, 120_000);
});
