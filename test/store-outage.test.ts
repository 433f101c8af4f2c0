import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../src/store/index.js';
import { createPgStore } from '../src/store/postgres/pg-store.js';
import { createSqliteStore, DATABASE_FILE } from '../src/store/sqlite/sqlite-store.js';
import { STALL_MS } from '../src/store/heartbeat.js';
import { PAGE_READ_MS } from '../src/page-read.js';
import { STORE_ANSWER_MS } from '../src/webhooks/intake.js';
import { eventually } from './support/net.js';
import { buildDiskShim, powerCut, sendEvent, startDaemon } from './support/outage.js';
import { startPgProxy } from './support/pg-proxy.js';
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
  const shim = await buildDiskShim(dir);
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

const readyz = async (url: string) => (await (await fetch(`${url}/readyz`)).json()) as { status: string; checks: Record<string, { ok: boolean; reason?: string }> };

async function outage(makeFault: (dir: string) => Promise<Fault>): Promise<void> {
  const dir = await tempDir('schoolbridge-outage-');
  cleanups.push(() => dir.cleanup());
  const fault = await makeFault(dir.dir);
  const { url, child } = await startDaemon(dir.dir, { ...fault, cleanup: (fn) => cleanups.push(fn) });
  const acknowledged: string[] = [];
  const answers: Awaited<ReturnType<typeof sendEvent>>[] = [];
  for (let i = 0; i < 10; i++) answers.push(await sendEvent(url));
  expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
  acknowledged.push(...answers.map((a) => a.body.id!));
  expect(answers.map((a) => a.body.id)).toEqual(answers.map((a) => a.identity));

  await fault.on();
  const during: Awaited<ReturnType<typeof sendEvent>>[] = [];
  for (let i = 0; i < 10; i++) during.push(await sendEvent(url));
  expect(during.map((a) => a.status)).toEqual(Array(10).fill(503));
  expect(during.every((a) => Number(a.retryAfter) > 0)).toBe(true);
  const down = await readyz(url);
  expect(down.status).not.toBe('ready');
  expect(down.checks.store).toMatchObject({ ok: false });
  expect(down.checks.store!.reason).toMatch(fault.reason);
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  // The console's problems say it first, not "all good".
  const problems = (await (await fetch(`${url}/api/problems`)).json()) as { badge: string; reasons: string[] };
  expect(problems.badge).toBe('red');
  expect(problems.reasons[0]).toMatch(/^store: /);
  expect(problems.reasons[0]!.slice('store: '.length)).toMatch(fault.reason);

  await fault.off();
  // No restart: the daemon finds out by itself that the store writes again.
  await eventually(async () => ((await readyz(url)).checks.store?.ok ? true : undefined), 30_000, 'the store to be writable again');
  const after: Awaited<ReturnType<typeof sendEvent>>[] = [];
  for (let i = 0; i < 10; i++) after.push(await sendEvent(url));
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

describe('a disk whose fsyncs fail, on sqlite', () => {
  it('acknowledges nothing a failed sync may have left off the disk, even once it syncs again', async () => {
    const dir = await tempDir('schoolbridge-outage-');
    cleanups.push(() => dir.cleanup());
    const diskLog = path.join(dir.dir, 'disk.log');
    const fault = await diskFull(dir.dir, 'sync');
    const { url, child } = await startDaemon(dir.dir, { ...fault, env: { ...fault.env, SB_DISK_LOG: diskLog }, cleanup: (fn) => cleanups.push(fn) });
    const acknowledged: string[] = [];
    const sendMore = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const answer = await sendEvent(url);
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
    const refused = await sendEvent(url);
    expect(refused.status).toBe(503);
    await fault.off();
    const readerDone = setTimeout(() => reader.exec('COMMIT'), READER_MS);
    cleanups.push(async () => clearTimeout(readerDone));
    // Sent again until it is taken: a duplicate of a row that may not be on disk.
    await eventually(async () => ((await sendEvent(url, refused.id)).status === 200 ? true : undefined), 30_000, 'the event sent again to be taken');
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

describe('a database that stops answering, on postgres', () => {
  it('answers 503 within the store\'s answer time, says why, and takes webhooks again once it answers', async () => {
    const server: TestPostgres = await startPostgres();
    cleanups.push(() => server.destroy());
    const url = await server.createDatabase('frozen');
    const proxy = await startPgProxy(url);
    cleanups.push(() => proxy.close());
    const dir = await tempDir('schoolbridge-frozen-');
    cleanups.push(() => dir.cleanup());
    const daemon = await startDaemon(dir.dir, { store: { driver: 'postgres', url: proxy.url }, env: {}, cleanup: (fn) => cleanups.push(fn) });
    const before = await sendEvent(daemon.url);
    expect(before.status).toBe(200);

    // Nothing fails and nothing answers: each delivery waits for the store as long as it may, no longer.
    proxy.freeze();
    const frozenAt = Date.now();
    const during = await Promise.all([1, 2, 3].map(() => sendEvent(daemon.url)));
    expect(during.map((a) => a.status)).toEqual([503, 503, 503]);
    expect(during.every((a) => Number(a.retryAfter) > 0)).toBe(true);
    expect(Date.now() - frozenAt).toBeLessThan(STORE_ANSWER_MS + 5000);
    // The heartbeat finds out too: /readyz says why, and a delivery is then refused at once.
    await eventually(async () => ((await readyz(daemon.url)).checks.store?.ok === false ? true : undefined), STALL_MS + 10_000, 'the store to be not ready');
    expect((await readyz(daemon.url)).checks.store!.reason).toBe(`the store has not answered for ${STALL_MS / 1000} s`);
    const refusedAt = Date.now();
    expect((await sendEvent(daemon.url)).status).toBe(503);
    expect(Date.now() - refusedAt).toBeLessThan(1000);
    // The pages an operator and a scraper look at answer too, without what only the store can tell.
    const pagesAt = Date.now();
    const [metrics, status] = await Promise.all([fetch(`${daemon.url}/metrics`), fetch(`${daemon.url}/status.json`)]);
    expect(Date.now() - pagesAt).toBeLessThan(PAGE_READ_MS + 2000);
    expect([metrics.status, status.status]).toEqual([200, 200]);
    const text = await metrics.text();
    expect(text).toContain('schoolbridge_check_ok{check="store"} 0');
    expect(text).not.toMatch(/^schoolbridge_outbox_depth\{/m);
    expect(await status.json()).toMatchObject({ ready: false, readiness: { store: { ok: false } }, events: { receivedToday: expect.any(Number) } });
    // The console's problems say so at once without asking the store; its runs and a search, which
    // may read long, are refused at once, as admin actions are.
    const stalled = `the store has not answered for ${STALL_MS / 1000} s`;
    const problemsAt = Date.now();
    const problems = (await (await fetch(`${daemon.url}/api/problems`)).json()) as { badge: string; reasons: string[] };
    expect(Date.now() - problemsAt).toBeLessThan(1000);
    expect(problems.badge).toBe('red');
    expect(problems.reasons.slice(0, 2)).toEqual([`store: ${stalled}`, `the dead deliveries, the retrying deliveries, the connectors and the held deliveries could not be read: ${stalled}`]);
    const runs = await fetch(`${daemon.url}/api/runs`);
    expect([runs.status, runs.headers.get('retry-after'), await runs.json()]).toEqual([503, '5', { error: 'store.unavailable', message: stalled }]);
    expect((await fetch(`${daemon.url}/console/records?query=x`)).status).toBe(503);

    proxy.thaw();
    await eventually(async () => ((await readyz(daemon.url)).checks.store?.ok ? true : undefined), 30_000, 'the store to answer again');
    const after = await sendEvent(daemon.url);
    expect(after.status).toBe(200);
    // A delivery refused for want of an answer whose commit came through later is a duplicate when sent again.
    expect((await Promise.all(during.map((a) => sendEvent(daemon.url, a.id)))).map((a) => a.status)).toEqual([200, 200, 200]);

    daemon.child.kill('SIGTERM');
    await new Promise((resolve) => daemon.child.once('exit', resolve));
    const store = createPgStore({ url, log });
    await store.start();
    try {
      for (const answer of [before, after, ...during]) expect(await store.inbox.get(answer.identity), answer.identity).toBeDefined();
    } finally {
      await store.stop();
    }
  });
});
