import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { freshStoreAt, openStoreAt, type StoreAt } from './support/store-at.js';
import { ENGINES } from './support/stores.js';
import { tempDir } from './support/temp.js';
import { typeScriptArgs } from './support/typescript.js';

/**
 * kill -9 tests: a child process delivers through a real store (SQLite or PostgreSQL) and is
 * SIGKILLed after the target took a batch but before its outcome was recorded; a second process on
 * the same store must finish the job, redelivering with the same Idempotency-Key and never writing a
 * record twice.
 */
const FIXTURE = path.join(import.meta.dirname, 'fixtures', 'outbox-child.ts');
const children: ChildProcess[] = [];
const servers: Server[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

interface Run {
  child: ChildProcess;
  /** Resolves with the first line of that event. */
  next(event: string): Promise<Record<string, unknown>>;
  lines: Record<string, unknown>[];
  exited: Promise<{ code: number | null; signal: string | null }>;
}

function run(scenario: Record<string, unknown>): Run {
  const child = spawn(process.execPath, typeScriptArgs(FIXTURE), {
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

async function fresh(engine: StoreAt['engine']): Promise<StoreAt> {
  const { at, cleanup } = await freshStoreAt(engine);
  cleanups.push(cleanup);
  return at;
}

async function scratchDir(): Promise<string> {
  const { dir, cleanup } = await tempDir('schoolbridge-outbox-');
  cleanups.push(cleanup);
  return dir;
}

/** What the store holds at the end: deliveries not done, and how many of those named are still there (a done one leaves). */
async function storeContents(at: StoreAt, ids: string[]): Promise<{ open: number; named: number }> {
  const store = openStoreAt(at, pino({ level: 'silent' }));
  await store.start();
  try {
    let named = 0;
    for (const id of ids) if (await store.outbox.get(id)) named += 1;
    return { open: (await store.outbox.list()).length, named };
  } finally {
    await store.stop();
  }
}

describe.each(ENGINES)('outbox crash recovery (kill -9) on %s', (engine) => {
  it('killed after the receiver answered 2xx, before the outcome was recorded: the restart redelivers with the same Idempotency-Key, once', async () => {
    const requests: { key: string; body: string }[] = [];
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        requests.push({ key: String(req.headers['idempotency-key']), body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200).end('ok');
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    const store = await fresh(engine);

    const first = run({ store, connector: 'webhook', url, enqueue: 1, hangAfterDeliver: true });
    expect(await first.next('answered')).toMatchObject({ ids: ['students:1:crash-test'], outcomes: ['done'] });
    first.child.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(requests.map((r) => r.key)).toEqual(['students:1:crash-test']);

    const second = run({ store, connector: 'webhook', url, enqueue: 0, awaitDelivered: 1 });
    expect(await second.next('idle')).toMatchObject({ queued: 0, dead: 0 });
    expect((await second.exited).code).toBe(0);
    expect(requests.map((r) => r.key)).toEqual(['students:1:crash-test', 'students:1:crash-test']);
    expect(requests[1]!.body).toBe(requests[0]!.body); // the stored text, byte for byte
    expect(second.lines.filter((l) => l.event === 'delivered')).toEqual([{ event: 'delivered', key: 'students:1:crash-test' }]);
    expect(await storeContents(store, ['target:students:1:crash-test'])).toEqual({ open: 0, named: 0 });
  });

  it('file connector: killed after the append was fsync’d but before done, no record id is written twice', async () => {
    const store = await fresh(engine);
    const outDir = path.join(await scratchDir(), 'out');
    const first = run({ store, connector: 'file', outDir, enqueue: 1200, hangAfterDeliver: true });
    const answered = await first.next('answered');
    first.child.kill('SIGKILL');
    await first.exited;
    expect((answered.ids as string[]).length).toBeGreaterThan(0);
    expect(new Set(answered.outcomes as string[])).toEqual(new Set(['done']));

    const second = run({ store, connector: 'file', outDir, enqueue: 0, awaitDelivered: 1200 });
    expect(await second.next('idle')).toMatchObject({ queued: 0, dead: 0 });
    expect((await second.exited).code).toBe(0);

    const lines = (await readFile(path.join(outDir, 'students.jsonl'), 'utf8')).split('\n').filter(Boolean);
    const ids = lines.map((line) => (JSON.parse(line) as { id: string }).id);
    const expected = Array.from({ length: 1200 }, (_, i) => `students:${i + 1}:crash-test`);
    expect(ids).toHaveLength(1200);
    expect(new Set(ids).size).toBe(1200);
    // Batches of different keys may land in any order; each id exactly once is what counts.
    expect([...ids].sort()).toEqual([...expected].sort());
    expect(await storeContents(store, expected.map((id) => `target:${id}`))).toEqual({ open: 0, named: 0 });
  });
});
