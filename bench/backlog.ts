/**
 * `npm run bench:backlog`: what the outbox's reads cost while webhooks' records wait in the
 * delivery log, say through a long outage of the connectors. Each engine gets WEBHOOKS webhooks,
 * each a record for two connectors and one for one of them, and none is delivered. Then, each the
 * median of five: the counts (`/metrics` reads them at every scrape), a list of 50 (the console's
 * deliveries, the admin API), and the lookups of a person's deliveries by key and of one by id (the
 * console's record view); each beside a baseline measured in the same run: the records after the
 * connectors' cursors counted from the log's index (BASELINE), which a count of them has to do at
 * least. Also: how long an accept sent while a count runs waits for its answer (on SQLite the reads
 * run on the thread that commits the webhooks).
 *
 *   npm run bench:backlog [-- --engine sqlite|postgres --webhooks 200000]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import { pino } from 'pino';
import { openStore, type Store } from '../src/store/index.js';
import { startPostgres, type TestPostgres } from '../test/support/postgres.js';

type Engine = 'sqlite' | 'postgres';
const { values: args } = parseArgs({ options: { engine: { type: 'string' }, webhooks: { type: 'string', default: '200000' } } });
const WEBHOOKS = Number(args.webhooks);
/** Webhooks per round of accepts sent together (the store commits them as a group). */
const ROUND = 500;
const BASELINE = 'SELECT count(*) FROM outbox_log_cursor c JOIN outbox_log l ON l.part = c.part AND l.seq > c.after';
const BODY = '{"event":"invoice.created","object":{"id":1,"userId":7,"date":"2026-11-22 10:00:00","place":"Warszawa","description":"FV 1/11/2026"}}';

async function fill(store: Store): Promise<void> {
  for (let i = 0; i < WEBHOOKS; i += ROUND) {
    await Promise.all(Array.from({ length: Math.min(ROUND, WEBHOOKS - i) }, (_, k) => {
      const id = `invoice.created:${i + k}:bench`;
      const entry = { id, event: 'invoice.created', receivedAt: new Date().toISOString(), receivedAtMs: Date.now(), body: BODY, recordIds: [`events:${id}`, `invoices:${id}`], reprocessed: 0 };
      return store.inbox.accept(entry, [
        { id: `events:${id}`, stream: 'events', orderKey: `events:${i + k}`, json: BODY, connectors: ['a', 'b'] },
        { id: `invoices:${id}`, stream: 'invoices', orderKey: `invoices:${i + k}`, json: BODY, connectors: ['a'] },
      ]);
    }));
  }
}

async function medianMs(run: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[2]!;
}

async function measure(engine: Engine, dir: string, postgres: TestPostgres | undefined): Promise<void> {
  const url = postgres ? await postgres.createDatabase('counts') : undefined;
  const storeDir = path.join(dir, engine);
  const store = openStore({ driver: engine, dir: storeDir, url, poolSize: 4 }, pino({ level: 'silent' }));
  await store.start();
  try {
    await fill(store);
    const counts = await store.outbox.counts();
    const owed = [...counts].map(([connector, c]) => `${connector} ${c.depth}`).join(', ');
    let bare: () => Promise<unknown>;
    let close = async () => {};
    if (engine === 'sqlite') {
      const db = new Database(path.join(storeDir, 'schoolbridge.db'), { readonly: true });
      const count = db.prepare(BASELINE);
      bare = async () => count.get();
      close = async () => {
        db.close();
      };
    } else {
      const client = new pg.Client({ connectionString: url, options: '-c search_path=schoolbridge' });
      client.on('error', () => {});
      await client.connect();
      bare = () => client.query(BASELINE);
      close = () => client.end();
    }
    const baseline = await medianMs(bare);
    await close();
    const reads: [string, () => Promise<unknown>][] = [
      ['counts', () => store.outbox.counts()],
      ['list of 50', () => store.outbox.list({ limit: 50 })],
      ['lookup by key', () => store.outbox.lookup({ keys: [{ connector: 'a', orderKey: `events:${WEBHOOKS - 1}` }] })],
      ['lookup by id', () => store.outbox.lookup({ ids: [`a:events:invoice.created:${WEBHOOKS - 1}:bench`] })],
    ];
    const took: string[] = [];
    for (const [name, read] of reads) {
      const ms = await medianMs(read);
      took.push(`  ${name.padEnd(14)} ${ms.toFixed(1).padStart(7)} ms, ${(ms / baseline).toFixed(1)}x the baseline\n`);
    }
    // An accept sent a moment after a count began: how long its answer took.
    const reading = store.outbox.counts();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const sent = performance.now();
    await store.inbox.accept({ id: 'late', event: 'x', receivedAt: new Date().toISOString(), receivedAtMs: Date.now(), body: BODY, recordIds: [], reprocessed: 0 }, []);
    const waited = performance.now() - sent;
    await reading;
    process.stdout.write(`${engine}: ${WEBHOOKS} webhooks owed (deliveries: ${owed}); median of 5 each\n` +
      `  baseline: the records after the cursors, counted from the log's index ${baseline.toFixed(1)} ms\n${took.join('')}` +
      `  an accept sent during a count answered in ${waited.toFixed(1)} ms\n`);
  } finally {
    await store.stop();
  }
}

const engines = (args.engine ? [args.engine] : ['sqlite', 'postgres']) as Engine[];
const dir = await mkdtemp(path.join(tmpdir(), 'schoolbridge-bench-'));
const postgres = engines.includes('postgres') ? await startPostgres() : undefined;
try {
  for (const engine of engines) await measure(engine, dir, engine === 'postgres' ? postgres : undefined);
} finally {
  await postgres?.destroy();
  await rm(dir, { recursive: true, force: true });
}
