/**
 * bench:ingest — webhook intake throughput and ack latency, on each store engine.
 *
 *   npm run bench:ingest [-- --events 5000 --concurrency 50 --warmup 5000 --no-connector --engine sqlite|postgres --profile DIR --replicas N --pg-statements]
 *
 * For each engine (SQLite in a temp dir, PostgreSQL embedded, started here), the real daemon app runs
 * in this process (createApp, mode daemon: the real fastify server, the store, the outbox with a
 * `file` connector on `events` and `invoices`, the embedded sandbox as upstream) and, beside it, a bare
 * fastify route that only reads a JSON body and answers 200, measured right before it (the median of
 * three runs). A child
 * process (so the load generator does not share the server's event loop) POSTs warm-up deliveries
 * and then, without a pause, N distinct measured ones at the given concurrency, first to the bare
 * route, then to POST /webhooks/v2, and reports events/s and the p50/p99 time to the answer over the
 * N. Bars: SQLite ratio ≥ 0.25 and p99 ≤ 25 ms; PostgreSQL ratio ≥ 0.15 and p99 ≤ 50 ms. Then every
 * event acknowledged, warm-up included, must be in the connector's files once per stream: exit 1 otherwise.
 */
import { fork } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { pino } from 'pino';
import { Pool } from 'undici';
import { readId } from '../connectors/file/jsonl-file.js';
import { createApp } from '../src/app.js';
import { configSchema } from '../src/config/index.js';
import { readLines } from '../src/files/lines.js';
import { signatureHeader } from '../src/signature/index.js';
import { eventBody, invoice } from '../test/support/webhooks.js';
import { startPostgres, type TestPostgres } from '../test/support/postgres.js';
import { bucketQuantile, histogramBuckets } from './daemon-histogram.js';
import { runReplicas } from './ingest-replicas.js';
import { PG_STATEMENTS_FLAGS, pgStatements } from './pg-statements.js';
import { descendantTicks, threadShares, threadTicks } from './thread-cpu.js';

const SECRET = 'bench-secret';
/** Runs of the bare route per engine; the median one is the baseline. */
const BARE_RUNS = 3;
const BARS = { sqlite: { ratio: 0.25, p99: 25 }, postgres: { ratio: 0.15, p99: 50 } } as const;
type Engine = keyof typeof BARS;

interface Run {
  target: string;
  count: number;
  ms: number;
  eventsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Record<number, number>;
  /** The load generator's own CPU per request (µs), to see that it is not what limits the run. */
  clientCpuMicros?: number;
}

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '5000' },
    concurrency: { type: 'string', default: '50' },
    // Warm-up requests per target, sent right before the measured ones. With 1000, both routes were
    // still speeding up during the measured run (the bare one from ~4,000 to ~16,000 req/s), which put
    // a cold start, not a long-running daemon's steady state, into the p99.
    warmup: { type: 'string', default: '5000' },
    /** Measure intake alone: no connector, so the outbox enqueues nothing and delivers nothing. */
    'no-connector': { type: 'boolean', default: false },
    /** Deliveries in flight per connector (delivery.concurrency), to see what delivery costs ingest. */
    'delivery-concurrency': { type: 'string' },
    /** One engine only (default: both, SQLite first). */
    engine: { type: 'string' },
    /** Writes a CPU profile of the daemon's main thread during the measured intake window to this directory. */
    profile: { type: 'string' },
    /** PostgreSQL: what each statement of the daemon's cost in the server, warm-up included (pg_stat_statements). */
    'pg-statements': { type: 'boolean', default: false },
    /** Also: N daemon processes on one PostgreSQL database beside one (ingest-replicas.ts). */
    replicas: { type: 'string' },
    // child-process options
    url: { type: 'string' },
    target: { type: 'string' },
  },
});

/**
 * The load generator: warm-up and measured requests prepared up front and sent back to back, with
 * `concurrency` in flight at any time; only the last `count` are measured. No pause between the two:
 * the server is measured in its steady state under continuous load (JIT warm, deliveries of earlier
 * events running alongside, as they would in a long-running daemon), not at a cold or idle start.
 */
async function load(url: string, target: string, count: number, concurrency: number, warmup: number): Promise<Run> {
  // Several URLs (replicas behind no balancer): requests go to each in turn.
  const pools = url.split(',').map((one) => new Pool(one, { connections: concurrency, pipelining: 1 }));
  const requests = [...prepare(warmup, WARMUP_IDS), ...prepare(count, 0)];
  let cpu = process.cpuUsage();
  const run = await measure(pools, target, requests, concurrency, warmup, () => {
    cpu = process.cpuUsage();
    process.send?.('measuring');
  });
  const used = process.cpuUsage(cpu);
  run.clientCpuMicros = (used.user + used.system) / count;
  await Promise.all(pools.map((pool) => pool.close()));
  return { target, ...run };
}

/** Invoice ids of the warm-up deliveries start after this; the measured ones are 1…N. */
const WARMUP_IDS = 1_000_000;

function prepare(count: number, offset: number): { body: string; header: string }[] {
  const now = Math.floor(Date.now() / 1000);
  return Array.from({ length: count }, (_, i) => {
    const body = eventBody('invoice.created', invoice({ id: offset + i + 1, numberId: offset + i + 1 }));
    return { body, header: signatureHeader(SECRET, body, now) };
  });
}

/** Sends every request; measures those from index `skip` on, from the moment the first of them is sent. */
async function measure(
  pools: Pool[], target: string, requests: { body: string; header: string }[], concurrency: number, skip: number, onWindow: () => void,
): Promise<Omit<Run, 'target'>> {
  const count = requests.length - skip;
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let next = 0;
  let windowStart = performance.now();
  const worker = async () => {
    while (next < requests.length) {
      const index = next++;
      const { body, header } = requests[index]!;
      const started = performance.now();
      if (index === skip) {
        windowStart = started;
        onWindow();
      }
      const response = await pools[index % pools.length]!.request({ method: 'POST', path: target, body, headers: { 'content-type': 'application/json', 'webhook-signature': header } });
      await response.body.dump();
      if (index < skip) continue;
      latencies.push(performance.now() - started);
      statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const ms = performance.now() - windowStart;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { count, ms, eventsPerSecond: (count / ms) * 1000, p50Ms: at(0.5), p99Ms: at(0.99), statuses };
}

/** Runs the load generator in a child process; `onWindow` is called when its measured window opens. */
function inChild(url: string, target: string, count: number, concurrency: number, warmup: number, onWindow: (pid: number) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [
      '--url', url, '--target', target, '--events', String(count), '--concurrency', String(concurrency), '--warmup', String(warmup),
    ], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.on('message', (message) => {
      if (message === 'measuring') onWindow(child.pid!);
      else resolve(message as Run);
    });
    child.once('error', reject);
    child.once('exit', (code) => code === 0 || reject(new Error(`load generator exited with ${code}`)));
  });
}

async function main(): Promise<void> {
  const events = Number(args.events);
  const concurrency = Number(args.concurrency);
  const warmup = Number(args.warmup);
  const engines = (args.engine ? [args.engine] : ['sqlite', 'postgres']) as Engine[];
  process.stdout.write(`bench:ingest — ${events} signed deliveries, concurrency ${concurrency}, ${warmup} warm-up, ${process.version}, ${availableParallelism()} CPUs\n`);
  const statements = args['pg-statements'] ? { flags: PG_STATEMENTS_FLAGS } : {};
  const postgres = engines.includes('postgres') ? await startPostgres(statements) : undefined;
  try {
    for (const engine of engines) await runEngine(engine, postgres, { events, concurrency, warmup });
    const replicas = Number(args.replicas ?? 0);
    if (replicas > 1 && postgres) await runReplicas({ postgres, replicas, load: { events, concurrency, warmup }, secret: SECRET, inChild });
  } finally {
    await postgres?.destroy();
  }
}

async function runEngine(engine: Engine, postgres: TestPostgres | undefined, load: { events: number; concurrency: number; warmup: number }): Promise<void> {
  const { events, concurrency, warmup } = load;
  const dir = await mkdtemp(path.join(tmpdir(), 'schoolbridge-bench-'));
  const log = pino({ level: 'silent' });
  const url = engine === 'postgres' ? await postgres!.createDatabase('ingest') : undefined;
  const store = url ? { driver: 'postgres', url } : { driver: 'sqlite', dir: path.join(dir, 'store') };
  const config = configSchema.parse({
    upstream: { baseUrl: 'sandbox', clientId: 'bench-client', clientSecret: SECRET },
    sandbox: { students: 1 },
    server: { host: '127.0.0.1', port: 0 },
    webhooks: { reconcileOnStart: false },
    poll: { onStart: false, schedule: '0 0 1 1 *' },
    export: { onStart: false, schedule: '0 0 1 1 *' },
    store,
    ...(args['delivery-concurrency'] ? { delivery: { concurrency: Number(args['delivery-concurrency']) } } : {}),
    connectors: args['no-connector'] ? [] : [{ name: 'files', type: 'file', streams: ['events', 'invoices'], dir: path.join(dir, 'out') }],
    log: { level: 'silent' },
  });
  const app = await createApp({ config, log, mode: 'daemon' });
  await app.start();
  const bare = Fastify({ bodyLimit: config.webhooks.bodyLimitBytes });
  bare.post('/bare', async (request) => ({ ok: typeof request.body === 'object' }));
  await bare.listen({ host: '127.0.0.1', port: 0 });
  const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}`;
  try {
    // The bare route's rate varies more from run to run than the intake's (the load generator is
    // most of what it measures): the median of three runs, back to back, as bench:poll's baseline.
    const bareRuns: { run: Run; cpu: NodeJS.CpuUsage }[] = [];
    for (let i = 0; i < BARE_RUNS; i++) {
      let started = process.cpuUsage();
      const run = await inChild(bareUrl, '/bare', events, concurrency, warmup, () => {
        started = process.cpuUsage();
      });
      bareRuns.push({ run, cpu: process.cpuUsage(started) });
    }
    const sorted = [...bareRuns].sort((a, b) => a.run.eventsPerSecond - b.run.eventsPerSecond);
    const { run: baseline, cpu: bareCpu } = sorted[Math.floor(sorted.length / 2)]!;
    let cpu = process.cpuUsage();
    const loopDelay = monitorEventLoopDelay({ resolution: 1 });
    loopDelay.enable();
    const profiler = args.profile ? await startProfiler() : undefined;
    let threadsBefore = new Map<number, number>();
    let loadGenerator = new Set<number>();
    let othersBefore = 0;
    const intake = await inChild(app.server!.url, '/webhooks/v2', events, concurrency, warmup, (pid) => {
      loopDelay.reset();
      cpu = process.cpuUsage();
      threadsBefore = threadTicks();
      loadGenerator = new Set([pid]);
      othersBefore = descendantTicks(loadGenerator);
      void profiler?.post('Profiler.start');
    });
    const threads = threadShares(threadsBefore, threadTicks(), intake.ms);
    loopDelay.disable();
    if (profiler) await stopProfiler(profiler, path.join(args.profile!, `ingest-${engine}.cpuprofile`));
    await app.outbox.whenIdle();
    const intakeCpu = process.cpuUsage(cpu);
    // PostgreSQL's postmaster and backends are processes of ours (test/support/postgres.ts).
    const othersMicros = ((descendantTicks(loadGenerator) - othersBefore) * 10_000) / events;
    const perEvent = (usage: NodeJS.CpuUsage) =>
      `${((usage.user + usage.system) / events).toFixed(0)} (user ${(usage.user / events).toFixed(0)}, system ${(usage.system / events).toFixed(0)})`;
    const delivered = [...(await app.outbox.counts()).values()].reduce((n, c) => n + c.depth, 0);
    report(engine, baseline, intake, bareRuns.map((r) => r.run.eventsPerSecond));
    if (!args['no-connector']) await checkFiles(path.join(dir, 'out'), warmup, events);
    // Where the time goes, seen from the server: its own answer-time histogram (warm-up included)
    // and how late its event loop ran timers (CPU contention) during the intake run.
    const ack = await histogramBuckets(app.metrics, 'schoolbridge_webhook_ack_seconds', (labels) => labels.status === '200');
    process.stdout.write(`  server side: ack p50 ≤ ${bucketQuantile(ack, 0.5)} s, p99 ≤ ${bucketQuantile(ack, 0.99)} s (histogram buckets); event-loop delay p50 ${(loopDelay.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)} ms, max ${(loopDelay.max / 1e6).toFixed(1)} ms\n` +
      `  server CPU per request: bare ${perEvent(bareCpu)} µs, intake ${perEvent(intakeCpu)} µs (this process: daemon, outbox and file connector, until the outbox is idle)${engine === 'postgres' ? `, PostgreSQL's processes ${othersMicros.toFixed(0)} µs` : ''}; deliveries left queued: ${delivered}\n` +
      `  threads of this process busy during the measured window (share of one core): ${threads}\n`);
    if (url && args['pg-statements']) {
      const statements = await pgStatements(url);
      await statements.print({ count: warmup + events, unit: 'event received, warm-up included' }).finally(() => statements.close());
    }
  } finally {
    await bare.close();
    await app.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * What the rate is worth: every invoice sent and acknowledged, warm-up included, is in the `file`
 * connector's files once on each of its two streams (its record ids are `<stream>:invoice.created:
 * <invoice id>:<hash>`), and nothing else is. A failure sets the exit code.
 */
async function checkFiles(dir: string, warmup: number, events: number): Promise<void> {
  const expected = warmup + events;
  const sent = (invoice: number) => (invoice >= 1 && invoice <= events) || (invoice > WARMUP_IDS && invoice <= WARMUP_IDS + warmup);
  const found: string[] = [];
  for (const stream of ['events', 'invoices']) {
    const invoices = new Set<number>();
    let lines = 0;
    let twice = 0;
    let other = 0;
    await readLines(path.join(dir, `${stream}.jsonl`), (line) => {
      lines += 1;
      const invoice = Number(/^[a-z]+:invoice\.created:(\d+):/.exec(readId(line.toString('utf8')) ?? '')?.[1]);
      if (!sent(invoice)) other += 1;
      else if (invoices.has(invoice)) twice += 1;
      else invoices.add(invoice);
    }).catch(() => {});
    const ok = invoices.size === expected && twice === 0 && other === 0;
    if (!ok) process.exitCode = 1;
    found.push(`${stream}.jsonl ${lines} lines, ${invoices.size} of the invoices${twice ? `, ${twice} twice` : ''}${other ? `, ${other} lines of none sent` : ''}${ok ? '' : ' NOT AS EXPECTED'}`);
  }
  process.stdout.write(`  delivered (${expected} invoices sent, warm-up included, each once per stream): ${found.join('; ')}\n`);
}

async function startProfiler(): Promise<Session> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  return session;
}

async function stopProfiler(session: Session, file: string): Promise<void> {
  const { profile } = await session.post('Profiler.stop');
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify(profile));
  session.disconnect();
  process.stdout.write(`  profile of the main thread during the measured window: ${file}\n`);
}

function report(engine: Engine, baseline: Run, intake: Run, bareRates: number[]): void {
  const row = (name: string, run: Run) =>
    `  ${name.padEnd(26)} ${run.eventsPerSecond.toFixed(0).padStart(8)} ev/s   p50 ${run.p50Ms.toFixed(2).padStart(6)} ms   p99 ${run.p99Ms.toFixed(2).padStart(6)} ms   client CPU ${run.clientCpuMicros?.toFixed(0)} µs/req   statuses ${JSON.stringify(run.statuses)}`;
  const ratio = intake.eventsPerSecond / baseline.eventsPerSecond;
  const bar = BARS[engine];
  const ok = ratio >= bar.ratio && intake.p99Ms <= bar.p99;
  process.stdout.write(
    [
      `${engine}:`,
      `${row('bare fastify route', baseline)}   (median of ${bareRates.map((r) => r.toFixed(0)).join(', ')} ev/s)`,
      row('POST /webhooks/v2', intake),
      `  ratio intake/bare: ${ratio.toFixed(2)}   bar: ratio ≥ ${bar.ratio} and p99 ≤ ${bar.p99} ms → ${ok ? 'met' : 'NOT MET'}`,
      '',
    ].join('\n'),
  );
}

if (args.url && args.target) {
  const run = await load(args.url, args.target, Number(args.events), Number(args.concurrency), Number(args.warmup));
  process.send?.(run);
  process.disconnect?.();
} else {
  await main();
}
