import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Pool, request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../src/log.js';
import { signatureHeader } from '../src/signature/index.js';
import type { Store } from '../src/store/index.js';
import { createPgStore } from '../src/store/postgres/pg-store.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { eventBody, inboxIdFor, invoice } from './support/webhooks.js';
import { eventually, freePort } from './support/net.js';
import { ageDeadReplica, testDatabase } from './support/pg-database.js';
import { ENGINES, type Engine } from './support/stores.js';
import { tempDir } from './support/temp.js';

/**
 * A burst of signed events, the daemon killed (SIGKILL) midway, restarted, the unacknowledged ones
 * resent → every event that got a 200 is in the store, and delivered exactly once. On each engine:
 * a 200 is said only after the commit, so the kill can lose only events nobody was told about.
 */
const SECRET = 'kill-secret';
const EVENTS = 400;
const KILL_AFTER = 120;

const children = new Set<ChildProcess>();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Where the daemon keeps its store: a directory (SQLite) or a fresh database (PostgreSQL). */
async function storeConfig(engine: Engine, dir: string): Promise<{ yaml: string; open(): Store; dead(pid: number): Promise<void> }> {
  const log = silentLogger();
  if (engine === 'postgres') {
    const url = await testDatabase('kill');
    // A directory in the test's own for the embedded sandbox's school, which is kept there on PostgreSQL too.
    return { yaml: `{ driver: postgres, url: ${JSON.stringify(url)}, dir: ${JSON.stringify(path.join(dir, 'store'))} }`, open: () => createPgStore({ url, log }), dead: (pid) => ageDeadReplica(url, pid) };
  }
  const storeDir = path.join(dir, 'store');
  // The next process takes the lock over, and with it every lease of the killed one.
  return { yaml: `{ driver: sqlite, dir: ${JSON.stringify(storeDir)} }`, open: () => createSqliteStore({ dir: storeDir, log }), dead: async () => {} };
}

function configYaml(dir: string, port: number, store: string): string {
  return `
upstream: { baseUrl: sandbox, clientId: kill-client, clientSecret: ${SECRET} }
sandbox: { students: 1 }
server: { host: 127.0.0.1, port: ${port} }
webhooks: { reconcileOnStart: false }
poll: { onStart: false, schedule: "0 0 1 1 *" }
export: { onStart: false, schedule: "0 0 1 1 *" }
store: ${store}
connectors:
  - { name: files, type: file, streams: [events, invoices], dir: ${JSON.stringify(path.join(dir, 'out'))} }
log: { level: warn }
`;
}

async function startDaemon(configFile: string, base: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['bin/schoolbridge.js', 'start', '-c', configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.once('exit', () => children.delete(child));
  await eventually(async () => {
    if (child.exitCode !== null) throw new Error(`daemon exited with ${child.exitCode}: ${stderr}`);
    const response = await request(`${base}/healthz`);
    await response.body.dump();
    return response.statusCode === 200 ? true : undefined;
  }, 30_000, 'the daemon to listen');
  return child;
}

interface Delivery {
  id: string;
  body: string;
}

/** Sends every delivery (concurrency 20, fresh signature each); returns the ids answered 200. */
async function send(base: string, deliveries: Delivery[], onAck?: (count: number) => void): Promise<Set<string>> {
  const pool = new Pool(base, { connections: 20 });
  const acked = new Set<string>();
  let next = 0;
  const worker = async () => {
    while (next < deliveries.length) {
      const { id, body } = deliveries[next++]!;
      try {
        const response = await pool.request({
          method: 'POST', path: '/webhooks/v2', body,
          headers: { 'content-type': 'application/json', 'webhook-signature': signatureHeader(SECRET, body, Math.floor(Date.now() / 1000)) },
        });
        await response.body.dump();
        if (response.statusCode === 200) {
          acked.add(id);
          onAck?.(acked.size);
        }
      } catch {
        // The daemon died under us: not acknowledged, the upstream would retry.
      }
    }
  };
  await Promise.all(Array.from({ length: 20 }, worker));
  await pool.destroy();
  return acked;
}

/** Resolves with the exit code (null when killed by a signal), also when it has already exited. */
function stopped(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe.each(ENGINES)('webhook intake under kill -9, on %s', (engine) => {
  it('keeps every acknowledged event, exactly once, across a crash mid-burst', { timeout: 240_000 }, async () => {
    const { dir, cleanup } = await tempDir();
    cleanups.push(cleanup);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const configFile = path.join(dir, 'config.yaml');
    const where = await storeConfig(engine, dir);
    await writeFile(configFile, configYaml(dir, port, where.yaml));

    const deliveries: Delivery[] = Array.from({ length: EVENTS }, (_, i) => {
      const body = eventBody('invoice.created', invoice({ id: i + 1, numberId: i + 1 }));
      return { id: inboxIdFor(body), body };
    });

    const first = await startDaemon(configFile, base);
    const ackedBeforeCrash = await send(base, deliveries, (count) => count >= KILL_AFTER && first.kill('SIGKILL'));
    await stopped(first);
    // On PostgreSQL the killed daemon's leases return once its heartbeat is REPLICA_TTL_MS old: as
    // if that had passed (how long it takes is another test's business).
    await where.dead(first.pid!);
    expect(ackedBeforeCrash.size).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(ackedBeforeCrash.size).toBeLessThan(EVENTS);

    // The upstream resends what it has no 200 for, and (a lost answer) a few it has.
    const second = await startDaemon(configFile, base);
    const unacked = deliveries.filter((d) => !ackedBeforeCrash.has(d.id));
    const resent = await send(base, [...unacked, ...deliveries.filter((d) => ackedBeforeCrash.has(d.id)).slice(0, 20)]);
    expect(resent.size).toBe(unacked.length + 20);

    const eventsFile = path.join(dir, 'out', 'events.jsonl');
    // Deliveries the killed daemon had claimed wait for its lease to be found stale (on PostgreSQL,
    // at the next sweep, every 10 s).
    const lines = await eventually(async () => {
      const text = await readFile(eventsFile, 'utf8').catch(() => '');
      const ids = text.split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { id: string }).id);
      return ids.length >= EVENTS ? ids : undefined;
    }, 150_000, 'every event in events.jsonl');
    // What the killed daemon delivered but could not settle leaves the queue once its lease is found
    // stale (PostgreSQL: at a sweep) and it is delivered again.
    await eventually(async () => {
      const metrics = await (await fetch(`${base}/metrics`)).text();
      return /^schoolbridge_outbox_depth\{connector="files"\} 0$/m.test(metrics) ? true : undefined;
    }, 90_000, 'the outbox to be empty');
    second.kill('SIGTERM');
    expect(await stopped(second)).toBe(0);

    const expected = deliveries.map((d) => `events:${d.id}`).sort();
    expect([...lines].sort()).toEqual(expected);

    const store = where.open();
    await store.start();
    try {
      const inbox = await Promise.all([...ackedBeforeCrash].map(async (id) => [id, await store.inbox.get(id)] as const));
      expect(inbox.filter(([, entry]) => entry === undefined).map(([id]) => id)).toEqual([]);
      for (const [id, entry] of inbox) expect(entry?.recordIds, id).toEqual([`events:${id}`, `invoices:${id}`]);
      // Each was enqueued with its event and delivered (events.jsonl above): nothing is left queued.
      expect(await store.outbox.list()).toEqual([]);
    } finally {
      await store.stop();
    }
  });
});
