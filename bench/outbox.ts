/**
 * `npm run bench:outbox`: 10,000 records through the outbox and the `file` connector on each store
 * engine, beside a baseline that appends the same lines to a file with one fsync per batch. Each
 * engine twice: the records enqueued as a poll cycle's changes are, and the same records as the
 * created changes of a first cycle (a fresh snapshot swapped in, its created range delivered). Prints
 * records/s for each, and the CPU of this process per record (the store's thread and the file
 * connector's writes included; PostgreSQL's own processes not).
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
import { freshRows } from '../src/store/conformance.js';
import { openStore, type Store } from '../src/store/index.js';
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

/** One engine's store and outbox with a `file` connector on `students`, stopped by `stop()`. */
async function outboxOn(dir: string, engine: 'sqlite' | 'postgres', postgres: TestPostgres, name: string) {
  const log = pino({ level: 'silent' });
  const url = engine === 'postgres' ? await postgres.createDatabase(name) : undefined;
  const store = openStore({ driver: engine, dir: path.join(dir, `store-${name}`), url, poolSize: 10 }, log);
  await store.start();
  const dispatcher = new Agent();
  const out = path.join(dir, `out-${name}`);
  const config = { name: 'files', type: 'file', streams: ['students'] as const, dir: out };
  const outbox = createOutbox({
    store: store.outbox,
    connectors: [{ name: 'files', streams: ['students'], config: config as never, connector: fileConnector }],
    delivery: { maxAgeHours: 72, backoff: { baseMs: 1000, maxMs: 3_600_000 } },
    clock: systemClock,
    dispatcher,
    log,
    metrics: createMetricsRegistry(),
    checkIntervalMs: 0,
  });
  const stop = async () => {
    await outbox.stop();
    await store.stop();
    await dispatcher.close();
  };
  return { store, outbox, out, stop };
}

/** Runs `work` (which ends when the outbox is idle), then checks the file: seconds and this process's CPU µs per record. */
async function measured(count: number, out: string, work: () => Promise<void>) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await work();
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const lines = (await readFile(path.join(out, 'students.jsonl'), 'utf8')).split('\n').filter(Boolean).length;
  if (lines !== count) throw new Error(`expected ${count} lines, found ${lines}`);
  return { seconds, cpuMicros: (used.user + used.system) / count };
}

async function throughOutbox(dir: string, input: ChangeRecord[], engine: 'sqlite' | 'postgres', postgres: TestPostgres) {
  const { outbox, out, stop } = await outboxOn(dir, engine, postgres, `changes_${engine}`);
  await outbox.start();
  try {
    return await measured(input.length, out, async () => {
      for (let i = 0; i < input.length; i += CHUNK) await outbox.enqueue(input.slice(i, i + CHUNK));
      await outbox.whenIdle();
    });
  } finally {
    await stop();
  }
}

/**
 * The records' bodies as a first cycle's fresh snapshot, swapped in with a created range owed to the
 * connector (staging and swap not measured), then delivered from the range.
 */
async function throughRange(dir: string, input: ChangeRecord[], engine: 'sqlite' | 'postgres', postgres: TestPostgres) {
  const { store, outbox, out, stop } = await outboxOn(dir, engine, postgres, `created_${engine}`);
  try {
    await stageFirstCycle(store, input);
    return await measured(input.length, out, async () => {
      await outbox.start();
      await outbox.whenIdle();
    });
  } finally {
    await stop();
  }
}

async function stageFirstCycle(store: Store, input: ChangeRecord[]): Promise<void> {
  await store.snapshot.begin('students', 'fresh');
  for (let i = 0; i < input.length; i += CHUNK) {
    const rows = input.slice(i, i + CHUNK).map((r) => ({ key: r.key as number, chain: r.id.slice(r.id.lastIndexOf(':') + 1), json: JSON.stringify(r.record) }));
    await store.snapshot.stageFresh('students', freshRows(rows));
  }
  await store.snapshot.applyFresh('students', { state: {}, created: { detectedAt: new Date().toISOString(), connectors: ['files'], now: Date.now() } });
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
    ['', 'records/s', 'seconds', 'ratio', 'CPU µs/record'],
    ['baseline: append + fsync per 500', (input.length / base.seconds).toFixed(0), base.seconds.toFixed(2), '1.00', ''],
  ];
  for (const engine of (process.env.ENGINES?.split(',') ?? ['sqlite', 'postgres']) as ('sqlite' | 'postgres')[]) {
    for (const [label, through] of [['changes', throughOutbox], ['a first cycle\'s created changes', throughRange]] as const) {
      const run = await through(dir, input, engine, postgres);
      rows.push([`outbox (${engine}) + file connector, ${label}`, (input.length / run.seconds).toFixed(0), run.seconds.toFixed(2), (base.seconds / run.seconds).toFixed(2), run.cpuMicros.toFixed(1)]);
    }
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  process.stdout.write(`${input.length} records, ${(base.bytes / input.length).toFixed(0)} bytes of JSON each\n`);
  for (const row of rows) process.stdout.write(`${row.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}\n`);
} finally {
  await postgres.destroy();
  await rm(dir, { recursive: true, force: true });
}
