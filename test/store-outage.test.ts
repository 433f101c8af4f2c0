import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { open, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { signatureHeader } from '../src/signature/index.js';
import type { Store } from '../src/store/index.js';
import { createPgStore } from '../src/store/postgres/pg-store.js';
import { createSqliteStore, DATABASE_FILE } from '../src/store/sqlite/sqlite-store.js';
import { eventBody, inboxIdFor, invoice } from './support/webhooks.js';
import { eventually, freePort } from './support/net.js';
import { startPostgres, type TestPostgres } from './support/postgres.js';
import { ENGINES } from './support/stores.js';
import { tempDir } from './support/temp.js';

/**
 * A store that cannot write — a full disk under SQLite (a preloaded file layer makes the store's
 * writes fail with ENOSPC, as a full filesystem does), a disk whose fsyncs fail under SQLite (the
 * writes reach the page cache, nothing reaches the disk), PostgreSQL stopped for a while — with the
 * daemon running: every webhook is answered 503 with Retry-After, never 200; /readyz says why; and
 * once the store can write again the daemon takes webhooks again by itself, without a restart.
 * Every event it answered 200 is in the store afterwards.
 */
const BIN = path.join(import.meta.dirname, '..', 'bin', 'schoolbridge.js');
const SHIM_SOURCE = path.join(import.meta.dirname, 'fixtures', 'disk-full.c');
const SECRET = 'outage-secret';
const log = pino({ level: 'silent' });
/** How long the reader beside the daemon reads after the fault: longer than the heartbeat's probe (1 s). */
const READER_MS = 3000;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Fault {
  /** What the daemon's store is (for the config), and how it is opened afterwards. */
  store: Record<string, unknown>;
  /** What /readyz gives as the reason. */
  reason: RegExp;
  /** Whether an event refused during the fault was kept out of the store (not so when only its fsync failed). */
  refusedAbsent: boolean;
  env: Record<string, string>;
  on(): Promise<void>;
  off(): Promise<void>;
  open(): Store;
}

/**
 * What /readyz may give as the reason under each mode of the shim. Each failing write reports what
 * it met, and the last one stands: SQLite's own writes (`SQLITE_FULL`), the store's sync of the WAL
 * (`SQLITE_IOERR_FSYNC (errno)`), or an I/O call SQLite makes itself (`SQLITE_IOERR_…: disk I/O
 * error`, with no errno; only fsyncs fail in the sync modes).
 */
const REASONS = {
  full: /^(SQLITE_FULL: |SQLITE_IOERR_FSYNC \(ENOSPC\): the disk is full: |SQLITE_IOERR(_[A-Z]+)?: disk I\/O error$)/,
  sync: /^(SQLITE_IOERR_FSYNC \(EIO\): |SQLITE_IOERR_FSYNC: disk I\/O error$)/,
  'sync-full': /^(SQLITE_IOERR_FSYNC \(ENOSPC\): the disk is full: |SQLITE_IOERR_FSYNC: disk I\/O error$)/,
} as const;

/** `full`: writes and fsyncs fail with ENOSPC; `sync`: only fsyncs, with EIO; `sync-full`: only fsyncs, with ENOSPC. */
async function diskFull(dir: string, mode: 'full' | 'sync' | 'sync-full' = 'full'): Promise<Fault> {
  const shim = path.join(dir, 'libdiskfull.so');
  await promisify(execFile)('cc', ['-shared', '-fPIC', '-O2', '-o', shim, SHIM_SOURCE, '-ldl']);
  const storeDir = path.join(dir, 'store');
  const flag = path.join(dir, 'disk-is-full');
  return {
    store: { driver: 'sqlite', dir: storeDir },
    reason: REASONS[mode],
    refusedAbsent: mode === 'full',
    env: { LD_PRELOAD: shim, SB_FULL_DIR: storeDir, SB_FULL_FLAG: flag, SB_FULL_MODE: mode },
    on: () => writeFile(flag, ''),
    off: () => rm(flag, { force: true }),
    open: () => createSqliteStore({ dir: storeDir, log }),
  };
}

async function databaseDown(): Promise<Fault> {
  const server: TestPostgres = await startPostgres();
  cleanups.push(() => server.destroy());
  const url = await server.createDatabase('outage');
  return {
    store: { driver: 'postgres', url }, reason: /ECONNREFUSED|terminat|connect|shut/i, refusedAbsent: true,
    env: {}, on: () => server.stop(), off: () => server.start(), open: () => createPgStore({ url, log }),
  };
}

async function startDaemon(dir: string, fault: Fault): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const config = path.join(dir, 'config.yaml');
  await writeFile(config, JSON.stringify({
    upstream: { baseUrl: 'sandbox', clientId: 'c', clientSecret: SECRET },
    sandbox: { students: 2 },
    server: { host: '127.0.0.1', port },
    webhooks: { reconcileOnStart: false },
    poll: { onStart: true, schedule: '0 0 1 1 *' },
    export: { onStart: false, schedule: '0 0 1 1 *' },
    store: fault.store,
    connectors: [{ name: 'files', type: 'file', streams: ['events'], dir: path.join(dir, 'out') }],
    log: { level: 'warn' },
  }));
  const child = spawn(process.execPath, [BIN, 'start', '-c', config], { env: { ...process.env, ...fault.env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const url = `http://127.0.0.1:${port}`;
  await eventually(async () => ((await fetch(`${url}/readyz`)).ok ? true : undefined), 30_000, () => `the daemon to be ready (${stderr.slice(-500)})`);
  return { url, child };
}

let next = 1;
/** Sends a new event, or again the one of the given id. */
async function send(url: string, id = next++): Promise<{ id: number; identity: string; status: number; retryAfter: string | null; body: { id?: string } }> {
  const object = invoice({ id, numberId: id });
  const body = eventBody('invoice.created', object);
  const identity = inboxIdFor(body);
  const response = await fetch(`${url}/webhooks/v2`, {
    method: 'POST', body, headers: { 'content-type': 'application/json', 'webhook-signature': signatureHeader(SECRET, body, Math.floor(Date.now() / 1000)) },
  });
  return { id, identity, status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as { id?: string } };
}

const readyz = async (url: string) => (await (await fetch(`${url}/readyz`)).json()) as { status: string; checks: Record<string, { ok: boolean; reason?: string }> };

async function outage(makeFault: (dir: string) => Promise<Fault>): Promise<void> {
  const dir = await tempDir('schoolbridge-outage-');
  cleanups.push(() => dir.cleanup());
  const fault = await makeFault(dir.dir);
  const { url, child } = await startDaemon(dir.dir, fault);
  const acknowledged: string[] = [];
  const answers: Awaited<ReturnType<typeof send>>[] = [];
  for (let i = 0; i < 10; i++) answers.push(await send(url));
  expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
  acknowledged.push(...answers.map((a) => a.body.id!));
  expect(answers.map((a) => a.body.id)).toEqual(answers.map((a) => a.identity));

  await fault.on();
  const during: Awaited<ReturnType<typeof send>>[] = [];
  for (let i = 0; i < 10; i++) during.push(await send(url));
  expect(during.map((a) => a.status)).toEqual(Array(10).fill(503));
  expect(during.every((a) => Number(a.retryAfter) > 0)).toBe(true);
  const down = await readyz(url);
  expect(down.status).not.toBe('ready');
  expect(down.checks.store).toMatchObject({ ok: false });
  expect(down.checks.store!.reason).toMatch(fault.reason);
  expect((await fetch(`${url}/healthz`)).status).toBe(200);

  await fault.off();
  // No restart: the daemon finds out by itself that the store writes again.
  await eventually(async () => ((await readyz(url)).checks.store?.ok ? true : undefined), 30_000, 'the store to be writable again');
  const after: Awaited<ReturnType<typeof send>>[] = [];
  for (let i = 0; i < 10; i++) after.push(await send(url));
  expect(after.map((a) => a.status)).toEqual(Array(10).fill(200));
  acknowledged.push(...after.map((a) => a.body.id!));

  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  const store = fault.open();
  await store.start();
  try {
    for (const id of acknowledged) expect(await store.inbox.get(id), id).toBeDefined();
    if (fault.refusedAbsent) for (const refused of during) expect(await store.inbox.get(refused.identity), refused.identity).toBeUndefined();
  } finally {
    await store.stop();
  }
}

describe.each(ENGINES)('a store that cannot write, on %s', (engine) => {
  it('answers 503, says why, acknowledges nothing uncommitted, and takes webhooks again by itself', async () => {
    await outage((dir) => (engine === 'sqlite' ? diskFull(dir) : databaseDown()));
  });
});

/**
 * A power cut after what the shim's log (SB_DISK_LOG) tells of the store's files: every byte written
 * since a file's last sync that succeeded is lost, as are those a failed sync left behind (Linux may
 * mark such pages clean without writing them, and a later sync does not write them either) unless
 * written again since. They are zeroed; the WAL index (never synced) goes too, as with the page cache.
 * Gives how many syncs failed with written pages behind them.
 */
async function powerCut(diskLog: string): Promise<number> {
  type Range = [number, number];
  const minus = (ranges: Range[], [a, b]: Range): Range[] =>
    ranges.flatMap(([s, e]): Range[] => (e <= a || s >= b ? [[s, e]] : [...(s < a ? [[s, a] as Range] : []), ...(e > b ? [[b, e] as Range] : [])]));
  // `cut`: a truncation not synced yet; until it is, the disk may still have the file's old length.
  const files = new Map<string, { dirty: Range[]; lost: Range[]; cut?: number }>();
  let failedSyncs = 0;
  for (const line of (await readFile(diskLog, 'utf8')).split('\n').filter(Boolean)) {
    const [op, file, a, b] = line.split(' ') as [string, string, string, string?];
    const f = files.get(file) ?? { dirty: [], lost: [] };
    files.set(file, f);
    if (op === 'W') {
      const range: Range = [Number(a), Number(a) + Number(b)];
      f.dirty.push(range);
      f.lost = minus(f.lost, range);
    } else if (op === 'S') {
      if (a === 'fail' && f.dirty.length > 0) {
        failedSyncs += 1;
        f.lost.push(...f.dirty);
      }
      if (a === 'ok' && f.cut !== undefined) {
        f.lost = minus(f.lost, [f.cut, Infinity]);
        f.cut = undefined;
      }
      f.dirty = [];
    } else if (op === 'T') {
      f.dirty = minus(f.dirty, [Number(a), Infinity]);
      f.cut = Math.min(f.cut ?? Infinity, Number(a));
    }
  }
  for (const [file, { lost, cut }] of files) {
    // The truncated bytes cannot be brought back here; that they would come back is the failure.
    if (cut !== undefined && lost.some(([, e]) => e > cut)) throw new Error(`${file} was cut to ${cut} bytes without a sync: a power cut would bring back what a failed sync lost`);
  }
  for (const [file, { dirty, lost }] of files) {
    if (file.endsWith('-shm')) {
      await rm(file, { force: true });
      continue;
    }
    const handle = await open(file, 'r+').catch(() => undefined);
    if (!handle) continue;
    try {
      const { size } = await handle.stat();
      for (const [s, e] of [...dirty, ...lost]) if (Math.min(e, size) > s) await handle.write(Buffer.alloc(Math.min(e, size) - s), 0, Math.min(e, size) - s, s);
    } finally {
      await handle.close();
    }
  }
  return failedSyncs;
}

describe('a disk whose fsyncs fail, on sqlite', () => {
  it('acknowledges nothing a failed sync may have left off the disk, even once it syncs again', async () => {
    const dir = await tempDir('schoolbridge-outage-');
    cleanups.push(() => dir.cleanup());
    const diskLog = path.join(dir.dir, 'disk.log');
    const fault = await diskFull(dir.dir, 'sync');
    const { url, child } = await startDaemon(dir.dir, { ...fault, env: { ...fault.env, SB_DISK_LOG: diskLog } });
    const acknowledged: string[] = [];
    const sendMore = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const answer = await send(url);
        expect(answer.status).toBe(200);
        acknowledged.push(answer.identity);
      }
    };
    await sendMore(5);
    // A command reading beside the daemon from before the fault to a while after it: no checkpoint
    // can copy past what it reads, so the WAL keeps whatever the failed sync left behind.
    const reader = new Database(path.join(dir.dir, 'store', DATABASE_FILE), { readonly: true });
    cleanups.push(async () => void reader.close());
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM sqlite_master').get();
    await fault.on();
    // Committed, but its sync failed: its frames may never reach the disk.
    const refused = await send(url);
    expect(refused.status).toBe(503);
    await fault.off();
    const readerDone = setTimeout(() => reader.exec('COMMIT'), READER_MS);
    cleanups.push(async () => clearTimeout(readerDone));
    // Sent again until it is taken: a duplicate of a row that may not be on disk.
    await eventually(async () => ((await send(url, refused.id)).status === 200 ? true : undefined), 30_000, 'the event sent again to be taken');
    acknowledged.push(refused.identity);
    await sendMore(5);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    reader.close();

    expect(await powerCut(diskLog)).toBeGreaterThan(0);
    const store = fault.open();
    await store.start();
    try {
      const missing = [];
      for (const id of acknowledged) if (!(await store.inbox.get(id))) missing.push(id);
      expect(missing).toEqual([]);
    } finally {
      await store.stop();
    }
  });


  it('answers 503 for what it could not make durable, says why, and takes webhooks again by itself', async () => {
    await outage((dir) => diskFull(dir, 'sync'));
  });

  it('says that the disk is full when its fsyncs find no space', async () => {
    await outage((dir) => diskFull(dir, 'sync-full'));
  });
});
