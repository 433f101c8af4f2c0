import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createStore } from '../src/store/index.js';
import { DELIVERED, ENTRIES, RECORDS } from '../src/outbox/index.js';

/**
 * kill -9 tests (issue 5): a child process delivers through a real store in a temp dir and is
 * SIGKILLed at a chosen instant; a second process on the same store must finish the job, redelivering
 * with the same Idempotency-Key and never writing a record twice.
 */
const FIXTURE = path.join(import.meta.dirname, 'fixtures', 'outbox-child.ts');
const children: ChildProcess[] = [];
const servers: Server[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

interface Run {
  child: ChildProcess;
  /** Resolves with the first line of that event. */
  next(event: string): Promise<Record<string, unknown>>;
  lines: Record<string, unknown>[];
  exited: Promise<{ code: number | null; signal: string | null }>;
}

function run(scenario: Record<string, unknown>): Run {
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
    env: { ...process.env, SCENARIO: JSON.stringify(scenario) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const lines: Record<string, unknown>[] = [];
  const waiters: { event: string; resolve: (line: Record<string, unknown>) => void }[] = [];
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  createInterface({ input: child.stdout! }).on('line', (text) => {
    const line = JSON.parse(text) as Record<string, unknown>;
    lines.push(line);
    for (const waiter of waiters.filter((w) => w.event === line.event)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(line);
    }
  });
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      if (code !== 0 && signal === null) process.stderr.write(stderr);
      resolve({ code, signal });
    }),
  );
  return {
    child,
    lines,
    exited,
    next: (event) =>
      new Promise((resolve, reject) => {
        const found = lines.find((l) => l.event === event);
        if (found) return resolve(found);
        waiters.push({ event, resolve });
        void exited.then(({ code, signal }) => reject(new Error(`child exited (${code ?? signal}) before "${event}": ${stderr.slice(-2000)}`)));
      }),
  };
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'schoolbridge-outbox-'));
  dirs.push(dir);
  return dir;
}

async function storeContents(dir: string): Promise<{ entries: number; records: number; delivered: number }> {
  const store = createStore({ dir, log: pino({ level: 'silent' }) });
  await store.start();
  try {
    return { entries: store.size(ENTRIES), records: store.size(RECORDS), delivered: store.size(DELIVERED) };
  } finally {
    await store.stop();
  }
}

describe('outbox crash recovery (kill -9)', () => {
  it('killed between sending and marking done: the restart redelivers with the same Idempotency-Key, once', async () => {
    const keys: string[] = [];
    const victim: { child?: ChildProcess } = {};
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        keys.push(String(req.headers['idempotency-key']));
        // The first delivery arrives but is never answered: the sender dies waiting for the answer.
        if (keys.length === 1) victim.child!.kill('SIGKILL');
        else res.writeHead(200).end('ok');
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const dir = await tempDir();

    const first = run({ dir, connector: 'webhook', url, enqueue: 1 });
    victim.child = first.child;
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(keys).toEqual(['students:1:crash-test']);

    const second = run({ dir, connector: 'webhook', url, enqueue: 0 });
    expect(await second.next('idle')).toMatchObject({ queued: 0, dead: 0 });
    expect((await second.exited).code).toBe(0);
    expect(keys).toEqual(['students:1:crash-test', 'students:1:crash-test']);
    expect(second.lines.filter((l) => l.event === 'delivered')).toEqual([{ event: 'delivered', key: 'students:1:crash-test' }]);
    expect(await storeContents(dir)).toEqual({ entries: 0, records: 0, delivered: 1 });
  });

  it('file connector: killed after the append was fsync’d but before done, no record id is written twice', async () => {
    const dir = await tempDir();
    const outDir = path.join(dir, 'out');
    const first = run({ dir, connector: 'file', outDir, enqueue: 1200, hangAfterWrite: true });
    const written = await first.next('written');
    first.child.kill('SIGKILL');
    await first.exited;
    expect((written.ids as string[]).length).toBeGreaterThan(0);

    const second = run({ dir, connector: 'file', outDir, enqueue: 0 });
    expect(await second.next('idle')).toMatchObject({ queued: 0, dead: 0 });
    expect((await second.exited).code).toBe(0);

    const lines = (await readFile(path.join(outDir, 'students.jsonl'), 'utf8')).split('\n').filter(Boolean);
    const ids = lines.map((line) => (JSON.parse(line) as { id: string }).id);
    expect(ids).toHaveLength(1200);
    expect(new Set(ids).size).toBe(1200);
    // Batches of different keys may land in any order; each id exactly once is what counts.
    expect([...ids].sort()).toEqual(Array.from({ length: 1200 }, (_, i) => `students:${i + 1}:crash-test`).sort());
    expect(await storeContents(dir)).toEqual({ entries: 0, records: 0, delivered: 1200 });
  });
});
