import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { open, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { signatureHeader } from '../../src/signature/index.js';
import { eventBody, inboxIdFor, invoice } from './webhooks.js';
import { eventually, freePort } from './net.js';

/**
 * A daemon (`schoolbridge start` in a child process) under a faulty disk or store, for the outage
 * tests: the preloaded disk shim (test/fixtures/disk-full.c), webhooks signed for it, and a power
 * cut worked out from the shim's log of what reached the disk.
 */
const BIN = path.join(import.meta.dirname, '..', '..', 'bin', 'schoolbridge.js');
const SHIM_SOURCE = path.join(import.meta.dirname, '..', 'fixtures', 'disk-full.c');
export const OUTAGE_SECRET = 'outage-secret';

/** Builds the disk shim into `dir`; gives the library's path, for LD_PRELOAD. */
export async function buildDiskShim(dir: string): Promise<string> {
  const shim = path.join(dir, 'libdiskfull.so');
  await promisify(execFile)('cc', ['-shared', '-fPIC', '-O2', '-o', shim, SHIM_SOURCE, '-ldl']);
  return shim;
}

/**
 * Starts the daemon with a `file` connector on `events` in `<dir>/out`, the given store, environment
 * and config keys over these; resolves once /readyz is 200. The child is killed at `cleanup`.
 */
export async function startDaemon(
  dir: string,
  options: { store: Record<string, unknown>; env: Record<string, string>; config?: Record<string, unknown>; cleanup(fn: () => Promise<void>): void },
): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const config = path.join(dir, 'config.yaml');
  await writeFile(config, JSON.stringify({
    upstream: { baseUrl: 'sandbox', clientId: 'c', clientSecret: OUTAGE_SECRET },
    sandbox: { students: 2 },
    // The console open without a token: a test reads what its problems say during an outage.
    server: { host: '127.0.0.1', port, consolePublic: true },
    webhooks: { reconcileOnStart: false },
    poll: { onStart: true, schedule: '0 0 1 1 *' },
    export: { onStart: false, schedule: '0 0 1 1 *' },
    // The store's directory in the test's own, PostgreSQL's too: the embedded sandbox keeps its school there.
    store: { dir: path.join(dir, 'store'), ...options.store },
    connectors: [{ name: 'files', type: 'file', streams: ['events'], dir: path.join(dir, 'out') }],
    log: { level: 'warn' },
    ...options.config,
  }));
  const child = spawn(process.execPath, [BIN, 'start', '-c', config], { env: { ...process.env, ...options.env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  options.cleanup(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const url = `http://127.0.0.1:${port}`;
  await eventually(async () => ((await fetch(`${url}/readyz`)).ok ? true : undefined), 30_000, () => `the daemon to be ready (${stderr.slice(-500)})`);
  return { url, child };
}

let next = 1;
/** Sends a new event, or again the one of the given id. */
export async function sendEvent(url: string, id = next++): Promise<{ id: number; identity: string; status: number; retryAfter: string | null; body: { id?: string } }> {
  const object = invoice({ id, numberId: id });
  const body = eventBody('invoice.created', object);
  const identity = inboxIdFor(body);
  const response = await fetch(`${url}/webhooks/v2`, {
    method: 'POST', body, headers: { 'content-type': 'application/json', 'webhook-signature': signatureHeader(OUTAGE_SECRET, body, Math.floor(Date.now() / 1000)) },
  });
  return { id, identity, status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as { id?: string } };
}

/**
 * A power cut after what the shim's log (SB_DISK_LOG) tells of the store's files: every byte written
 * since a file's last sync that succeeded is lost, as are those a failed sync left behind (Linux may
 * mark such pages clean without writing them, and a later sync does not write them either) unless
 * written again since. They are zeroed; the WAL index (never synced) goes too, as with the page cache.
 * A sync that succeeded covers only what was written before it began: another thread's write logged
 * while it ran may have come too late for it. Gives how many syncs failed with written pages behind them.
 */
export async function powerCut(diskLog: string): Promise<number> {
  type Range = [number, number];
  const minus = (ranges: Range[], [a, b]: Range): Range[] =>
    ranges.flatMap(([s, e]): Range[] => (e <= a || s >= b ? [[s, e]] : [...(s < a ? [[s, a] as Range] : []), ...(e > b ? [[b, e] as Range] : [])]));
  // `dirty`: written and not yet covered by a sync, each with the log line that wrote it.
  // `cut`: a truncation not synced yet (with its line); until it is, the disk may still have the file's old length.
  const files = new Map<string, { dirty: { range: Range; at: number }[]; lost: Range[]; cut?: { length: number; at: number } }>();
  const begun = new Map<string, number>();
  let failedSyncs = 0;
  const lines = (await readFile(diskLog, 'utf8')).split('\n').filter(Boolean);
  for (const [at, line] of lines.entries()) {
    const [op, file, a, b] = line.split(' ') as [string, string, string, string?];
    const f = files.get(file) ?? { dirty: [], lost: [] };
    files.set(file, f);
    if (op === 'W') {
      const range: Range = [Number(a), Number(a) + Number(b)];
      f.dirty.push({ range, at });
      f.lost = minus(f.lost, range);
    } else if (op === 'B') {
      begun.set(a, at);
    } else if (op === 'S' && a === 'fail') {
      if (f.dirty.length > 0) failedSyncs += 1;
      f.lost.push(...f.dirty.map(({ range }) => range));
      f.dirty = [];
    } else if (op === 'S' && a === 'ok') {
      const began = begun.get(b!);
      if (began === undefined) throw new Error(`the disk log has the end of sync ${b} without its beginning: ${line}`);
      f.dirty = f.dirty.filter((write) => write.at > began);
      if (f.cut !== undefined && f.cut.at < began) {
        f.lost = minus(f.lost, [f.cut.length, Infinity]);
        f.cut = undefined;
      }
    } else if (op === 'T') {
      const length = Number(a);
      f.dirty = f.dirty.flatMap((write) => minus([write.range], [length, Infinity]).map((range) => ({ range, at: write.at })));
      f.cut = { length: Math.min(f.cut?.length ?? Infinity, length), at };
    } else {
      throw new Error(`the disk log has a line that is none of W, T, B, S: ${line}`);
    }
  }
  for (const [file, { lost, cut }] of files) {
    // The truncated bytes cannot be brought back here; that they would come back is the failure.
    if (cut !== undefined && lost.some(([, e]) => e > cut.length)) throw new Error(`${file} was cut to ${cut.length} bytes without a sync: a power cut would bring back what a failed sync lost`);
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
      for (const [s, e] of [...dirty.map(({ range }) => range), ...lost]) if (Math.min(e, size) > s) await handle.write(Buffer.alloc(Math.min(e, size) - s), 0, Math.min(e, size) - s, s);
    } finally {
      await handle.close();
    }
  }
  return failedSyncs;
}
