/**
 * `npm run bench:outbox`: 10,000 records through the outbox and the `file` connector on each store
 * engine, beside a baseline that appends the same lines to a file with one fsync per batch. Prints
 * records/s for each.
 *
 *   RECORDS=50000 npm run bench:outbox      # another size
 *   ENGINES=sqlite npm run bench:outbox     # one engine
 */
import { mkdtemp, open, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { Agent } from 'undici';
import { fileConnector } from '../connectors/file/index.js';
import { systemClock } from '../src/clock.js';
import { createMetricsRegistry } from '../src/metrics.js';
import { createOutbox } from '../src/outbox/index.js';
import type { ChangeRecord } from '../src/records.js';
import { openStore } from '../src/store/index.js';
import { startPostgres, type TestPostgres } from '../test/support/postgres.js';

const COUNT = Number(process.env.RECORDS ?? 10_000);
/** Records per enqueue commit, as a poll cycle commits its changes in chunks. */
const CHUNK = 1000;
/** The file connector's batch size: the baseline fsyncs as often. */
const BATCH = 500;

function records(): ChangeRecord[] {
  return Array.from({ length: COUNT }, (_, i) => ({
    id: `students:${i + 1}:${(i * 2654435761 % 2 ** 32).toString(16).padStart(12, '0')}`,
    stream: 'students',
    op: 'updated',
    key: i + 1,
    detectedAt: new Date(Date.UTC(2026, 10, 22, 10, 0, 0, i)).toISOString(),
    changes: [{ path: 'user.lastName', from: 'Kowalska', to: 'Nowak' }],
    record: {
      id: i + 1, studentNumber: `S${i + 1}`, user: { id: 10_000 + i, login: `student${i + 1}`, firstName: 'Anna', lastName: 'Nowak',
        email: `student${i + 1}@example.com`, phone: 'ffdfff', isArchived: 0, additionalData: { street: 'Kwiatowa 4/5 ', zipCode: '01-123 ', city: 'Łódź' } },
    },
    previous: null,
  }));
}

async function throughOutbox(dir: string, input: ChangeRecord[], engine: 'sqlite' | 'postgres', postgres: TestPostgres) {
  const log = pino({ level: 'silent' });
  const url = engine === 'postgres' ? await postgres.createDatabase('outbox') : undefined;
  const store = openStore({ driver: engine, dir: path.join(dir, `store-${engine}`), url, poolSize: 10 }, log);
  await store.start();
  const dispatcher = new Agent();
  const config = { name: 'files', type: 'file', streams: ['students'] as const, dir: path.join(dir, 'out') };
  const outbox = createOutbox({
    store: store.outbox,
    connectors: [{ name: 'files', streams: ['students'], config: { ...config, dir: path.join(dir, `out-${engine}`) } as never, connector: fileConnector }],
    delivery: { maxAgeHours: 72, backoff: { baseMs: 1000, maxMs: 3_600_000 } },
    clock: systemClock,
    dispatcher,
    log,
    metrics: createMetricsRegistry(),
    checkIntervalMs: 0,
  });
  await outbox.start();
  const started = performance.now();
  for (let i = 0; i < input.length; i += CHUNK) await outbox.enqueue(input.slice(i, i + CHUNK));
  await outbox.whenIdle();
  const seconds = (performance.now() - started) / 1000;
  await outbox.stop();
  await store.stop();
  await dispatcher.close();
  const lines = (await readFile(path.join(dir, `out-${engine}`, 'students.jsonl'), 'utf8')).split('\n').filter(Boolean).length;
  if (lines !== input.length) throw new Error(`expected ${input.length} lines, found ${lines}`);
  return { seconds };
}

async function baseline(dir: string, input: ChangeRecord[]) {
  const file = path.join(dir, 'baseline.jsonl');
  const started = performance.now();
  for (let i = 0; i < input.length; i += BATCH) {
    const handle = await open(file, 'a');
    await handle.write(input.slice(i, i + BATCH).map((r) => `${JSON.stringify(r)}\n`).join(''));
    await handle.sync();
    await handle.close();
  }
  return { seconds: (performance.now() - started) / 1000, bytes: (await stat(file)).size };
}

const dir = await mkdtemp(path.join(tmpdir(), 'schoolbridge-bench-'));
const postgres = await startPostgres();
try {
  const input = records();
  const base = await baseline(dir, input);
  const rows = [
    ['', 'records/s', 'seconds', 'ratio'],
    ['baseline: append + fsync per 500', (input.length / base.seconds).toFixed(0), base.seconds.toFixed(2), '1.00'],
  ];
  for (const engine of (process.env.ENGINES?.split(',') ?? ['sqlite', 'postgres']) as ('sqlite' | 'postgres')[]) {
    const run = await throughOutbox(dir, input, engine, postgres);
    rows.push([`outbox (${engine}) + file connector`, (input.length / run.seconds).toFixed(0), run.seconds.toFixed(2), (base.seconds / run.seconds).toFixed(2)]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  process.stdout.write(`${input.length} records, ${(base.bytes / input.length).toFixed(0)} bytes of JSON each\n`);
  for (const row of rows) process.stdout.write(`${row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}\n`);
} finally {
  await postgres.destroy();
  await rm(dir, { recursive: true, force: true });
}
