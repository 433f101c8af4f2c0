/**
 * bench:ingest — webhook intake throughput and ack latency, on each store engine.
 *
 *   npm run bench:ingest [-- --events 5000 --concurrency 50 --warmup 5000 --no-connector --engine sqlite|postgres --profile DIR --replicas N --pg-statements]
 *
 * For each engine (SQLite in a temp dir, PostgreSQL embedded, started here with its WAL warmed as on a
 * server that has run a while: pg-wal.ts), the real daemon app runs
 * in this process (createApp, mode daemon: the real fastify server, the store, the outbox with a
 * `file` connector on `events` and `invoices`, the embedded sandbox as upstream) and, beside it, a bare
 * fastify route that only reads a JSON body and answers 200; the process runs with the Node.js
 * options of `npm start` (daemon-process.ts). A child process (so the load generator
 * does not share the server's event loop) POSTs warm-up deliveries and then, without a pause, N
 * distinct measured ones at the given concurrency, first to the bare route, then to POST /webhooks/v2,
 * and reports events/s and the p50/p99 time to the answer over the N; three such rounds, each rate the
 * median of its three runs and the p99 taken over all measured requests of the intake. Bars: SQLite
 * ratio ≥ 0.25 and p99 ≤ 25 ms; PostgreSQL ratio ≥ 0.15 and p99 ≤ 50 ms. Then every event
 * acknowledged, warm-ups included, must be in the connector's files once per stream: exit 1 otherwise.
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
import { createApp, type App } from '../src/app.js';
import { configSchema } from '../src/config/index.js';
import { readLines } from '../src/files/lines.js';
import { signatureHeader } from '../src/signature/index.js';
import { eventBody, invoice } from '../test/support/webhooks.js';
import { daemonNodeFlags } from '../test/support/daemon-flags.js';
import { startPostgres, type TestPostgres } from '../test/support/postgres.js';
import { bucketQuantile, histogramBuckets } from './daemon-histogram.js';
import { rerunWithDaemonFlags, withoutDaemonFlags } from './daemon-process.js';
import { runReplicas } from './ingest-replicas.js';
import { PG_STATEMENTS_FLAGS, pgStatements } from './pg-statements.js';
import { warmWal } from './pg-wal.js';
import { descendantTicks, threadShares, threadTicks } from './thread-cpu.js';

const SECRET = 'bench-secret';
/**
 * Rounds per engine of a bare run and an intake run, back to back: each rate is the median of its
 * runs. Both vary from run to run on a shared machine, the bare one most (the load generator is
 * most of what it measures), and one intake run lasts about half a second.
 */
const ROUNDS = 3;
/**
 * Invoice ids: round r's start after r × ROUND_IDS, so that every round's deliveries are new events
 * (a duplicate is answered by a cheaper path); within a round the warm-up's start after WARMUP_IDS,
 * the measured ones are 1…N.
 */
const ROUND_IDS = 10_000_000;
const WARMUP_IDS = 1_000_000;
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
  /** Each measured request's time to the answer (ms), ascending: the rounds' p99 is taken over all of them. */
  latencies: number[];
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
    round: { type: 'string', default: '0' },
  },
});

/**
 * The load generator: warm-up and measured requests prepared up front and sent back to back, with
 * `concurrency` in flight at any time; only the last `count` are measured. No pause between the two:
 * the server is measured in its steady state under continuous load (JIT warm, the outbox holding
 * the earlier events' deliveries for the burst to end and starting one batch a second meanwhile, as
 * in a long-running daemon: src/outbox/intake-first.ts), not at a cold or idle start.
 */
async function load(url: string, target: string, count: number, concurrency: number, warmup: number, round: number): Promise<Run> {
  // Several URLs (replicas behind no balancer): requests go to each in turn.
  const pools = url.split(',').map((one) => new Pool(one, { connections: concurrency, pipelining: 1 }));
  const base = round * ROUND_IDS;
  const requests = [...prepare(warmup, base + WARMUP_IDS), ...prepare(count, base)];
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
  return { count, ms, eventsPerSecond: (count / ms) * 1000, p50Ms: quantile(latencies, 0.5), p99Ms: quantile(latencies, 0.99), statuses, latencies };
}

function quantile(ascending: readonly number[], q: number): number {
  return ascending[Math.min(ascending.length - 1, Math.floor(q * ascending.length))]!;
}

/** Runs the load generator in a child process; `onWindow` is called when its measured window opens. */
function inChild(url: string, target: string, count: number, concurrency: number, warmup: number, onWindow: (pid: number) => void, round = 0): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [
      '--url', url, '--target', target, '--events', String(count), '--concurrency', String(concurrency), '--warmup', String(warmup), '--round', String(round),
    ], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: withoutDaemonFlags() });
    child.on('message', (message) => {
      if (message === 'measuring') onWindow(child.pid!);
      else resolve(message as Run);
    });
    child.once('error', reject);
    // After its result this rejects nothing; before it, an exit is a failure whatever its code.
    child.once('exit', (code) => reject(new Error(`load generator exited with ${code} before it sent its result`)));
  });
}

async function main(): Promise<void> {
  const events = Number(args.events);
  const concurrency = Number(args.concurrency);
  const warmup = Number(args.warmup);
  const engines = (args.engine ? [args.engine] : ['sqlite', 'postgres']) as Engine[];
  process.stdout.write(`bench:ingest — ${events} signed deliveries, concurrency ${concurrency}, ${warmup} warm-up, ${process.version} ${daemonNodeFlags().join(' ')}, ${availableParallelism()} CPUs\n`);
  const statements = args['pg-statements'] ? { flags: PG_STATEMENTS_FLAGS } : {};
  const postgres = engines.includes('postgres') ? await startPostgres(statements) : undefined;
  try {
    if (postgres) process.stdout.write(`${await warmWal(postgres.url())}\n`);
    for (const engine of engines) await runEngine(engine, postgres, { events, concurrency, warmup });
    const replicas = Number(args.replicas ?? 0);
    if (replicas > 1 && postgres) await runReplicas({ postgres, replicas, load: { events, concurrency, warmup }, secret: SECRET, inChild });
  } finally {
    await postgres?.destroy();
  }
}

async function runEngine(engine: Engine, postgres: TestPostgres | undefined, load: { events: number; concurrency: number; warmup: number }): Promise<void> {
  const { events, warmup } = load;
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
    const rounds: Round[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      rounds.push(await runRound({ app, bareUrl, round, load, profile: args.profile && round === ROUNDS - 1 ? path.join(args.profile, `ingest-${engine}.cpuprofile`) : undefined }));
    }
    const median = (runs: Run[]) => [...runs].sort((a, b) => a.eventsPerSecond - b.eventsPerSecond)[Math.floor(runs.length / 2)]!;
    const baseline = median(rounds.map((r) => r.bare));
    const intake = median(rounds.map((r) => r.intake));
    const middle = rounds.find((r) => r.intake === intake)!;
    const perEvent = (usages: NodeJS.CpuUsage[], count: number) => {
      const user = usages.reduce((n, u) => n + u.user, 0) / count;
      const system = usages.reduce((n, u) => n + u.system, 0) / count;
      return `${(user + system).toFixed(0)} (user ${user.toFixed(0)}, system ${system.toFixed(0)})`;
    };
    const sent = ROUNDS * (warmup + events);
    const othersMicros = (rounds.reduce((n, r) => n + r.othersTicks, 0) * 10_000) / sent;
    const delivered = [...(await app.outbox.counts()).values()].reduce((n, c) => n + c.depth, 0);
    report(engine, rounds, baseline, intake);
    if (!args['no-connector']) await checkFiles(path.join(dir, 'out'), warmup, events);
    // Where the time goes, seen from the server: its own answer-time histogram (warm-ups included)
    // and how late its event loop ran timers (CPU contention) during the median intake run.
    const ack = await histogramBuckets(app.metrics, 'schoolbridge_webhook_ack_seconds', (labels) => labels.status === '200');
    const transactions = await histogramBuckets(app.metrics, 'schoolbridge_store_transaction_seconds');
    const syncs = await histogramBuckets(app.metrics, 'schoolbridge_store_sync_seconds');
    const { loop } = middle;
    process.stdout.write(`  server side: ack p50 ≤ ${bucketQuantile(ack, 0.5)} s, p99 ≤ ${bucketQuantile(ack, 0.99)} s; store transactions p50 ≤ ${bucketQuantile(transactions, 0.5)} s, p99 ≤ ${bucketQuantile(transactions, 0.99)} s; syncs p50 ≤ ${bucketQuantile(syncs, 0.5)} s, p99 ≤ ${bucketQuantile(syncs, 0.99)} s (histogram buckets, warm-ups included); event-loop delay p50 ${loop.p50.toFixed(1)} ms, p99 ${loop.p99.toFixed(1)} ms, max ${loop.max.toFixed(1)} ms\n` +
      `  server CPU per request: bare ${perEvent(rounds.map((r) => r.bareCpu), ROUNDS * events)} µs, intake ${perEvent(rounds.map((r) => r.intakeCpu), sent)} µs (this process: daemon, outbox and file connector, from the warm-up's first request until the outbox is idle, per request sent)${engine === 'postgres' ? `, PostgreSQL's processes ${othersMicros.toFixed(0)} µs` : ''}; deliveries left queued: ${delivered}\n` +
      `  threads of this process busy during the median intake run (share of one core): ${middle.threads}\n`);
    if (url && args['pg-statements']) {
      const statements = await pgStatements(url);
      await statements.print({ count: ROUNDS * (warmup + events), unit: 'event received, warm-ups included' }).finally(() => statements.close());
    }
  } finally {
    await bare.close();
    await app.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** PostgreSQL's postmaster and backends are processes of ours (test/support/postgres.ts), named so. */
const postgresProcess = (command: string) => command === 'postgres';

/** One round: a bare run, then an intake run, measured until the outbox is idle again. */
interface Round {
  bare: Run;
  bareCpu: NodeJS.CpuUsage;
  intake: Run;
  intakeCpu: NodeJS.CpuUsage;
  /** CPU ticks of PostgreSQL's processes from the intake's warm-up until its deliveries are done. */
  othersTicks: number;
  threads: string;
  loop: { p50: number; p99: number; max: number };
}

async function runRound(options: { app: App; bareUrl: string; round: number; load: { events: number; concurrency: number; warmup: number }; profile: string | undefined }): Promise<Round> {
  const { app, bareUrl, round } = options;
  const { events, concurrency, warmup } = options.load;
  let bareStarted = process.cpuUsage();
  const bare = await inChild(bareUrl, '/bare', events, concurrency, warmup, () => {
    bareStarted = process.cpuUsage();
  }, round);
  const bareCpu = process.cpuUsage(bareStarted);
  // The intake's CPU and PostgreSQL's are counted from the warm-up's first request: while webhooks
  // pile up the deliveries wait (src/outbox/intake-first.ts), so the warm-up's are made in the
  // measured window and after it. Per webhook sent, warm-up included, until the outbox is idle.
  const cpu = process.cpuUsage();
  const othersBefore = descendantTicks(postgresProcess);
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  loopDelay.enable();
  const profiler = options.profile ? await startProfiler() : undefined;
  let threadsBefore = new Map<number, number>();
  const intake = await inChild(app.server!.url, '/webhooks/v2', events, concurrency, warmup, () => {
    loopDelay.reset();
    threadsBefore = threadTicks();
    void profiler?.post('Profiler.start');
  }, round);
  const threads = threadShares(threadsBefore, threadTicks(), intake.ms);
  loopDelay.disable();
  if (profiler) await stopProfiler(profiler, options.profile!);
  // The next round starts with nothing queued, as this one did.
  await app.outbox.whenIdle();
  const intakeCpu = process.cpuUsage(cpu);
  const othersTicks = descendantTicks(postgresProcess) - othersBefore;
  const loop = { p50: loopDelay.percentile(50) / 1e6, p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 };
  return { bare, bareCpu, intake, intakeCpu, othersTicks, threads, loop };
}

/**
 * What the rate is worth: every invoice sent and acknowledged, warm-ups included, is in the `file`
 * connector's files once on each of its two streams (its record ids are `<stream>:invoice.created:
 * <invoice id>:<hash>`), and nothing else is. A failure sets the exit code.
 */
async function checkFiles(dir: string, warmup: number, events: number): Promise<void> {
  const expected = ROUNDS * (warmup + events);
  const sent = (invoice: number) => {
    const own = invoice % ROUND_IDS;
    return invoice < ROUNDS * ROUND_IDS && ((own >= 1 && own <= events) || (own > WARMUP_IDS && own <= WARMUP_IDS + warmup));
  };
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
  process.stdout.write(`  delivered (${expected} invoices sent, warm-ups included, each once per stream): ${found.join('; ')}\n`);
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

/** The median bare run, the median intake run, their ratio and the p99 of every measured intake request against the bars. */
function report(engine: Engine, rounds: readonly Round[], baseline: Run, intake: Run): void {
  const row = (name: string, run: Run) =>
    `  ${name.padEnd(26)} ${run.eventsPerSecond.toFixed(0).padStart(8)} ev/s   p50 ${run.p50Ms.toFixed(2).padStart(6)} ms   p99 ${run.p99Ms.toFixed(2).padStart(6)} ms   client CPU ${run.clientCpuMicros?.toFixed(0)} µs/req   statuses ${JSON.stringify(run.statuses)}`;
  const rates = (runs: Run[]) => runs.map((r) => r.eventsPerSecond.toFixed(0)).join(', ');
  const ratio = intake.eventsPerSecond / baseline.eventsPerSecond;
  const p99 = quantile(rounds.flatMap((r) => r.intake.latencies).sort((a, b) => a - b), 0.99);
  const bar = BARS[engine];
  const ok = ratio >= bar.ratio && p99 <= bar.p99;
  process.stdout.write(
    [
      `${engine}:`,
      `${row('bare fastify route', baseline)}   (median of ${rates(rounds.map((r) => r.bare))} ev/s)`,
      `${row('POST /webhooks/v2', intake)}   (median of ${rates(rounds.map((r) => r.intake))} ev/s)`,
      `  ratio intake/bare: ${ratio.toFixed(2)} (each round's: ${rounds.map((r) => (r.intake.eventsPerSecond / r.bare.eventsPerSecond).toFixed(2)).join(', ')}); p99 of all ${ROUNDS} runs ${p99.toFixed(2)} ms   bar: ratio ≥ ${bar.ratio} and p99 ≤ ${bar.p99} ms → ${ok ? 'met' : 'NOT MET'}`,
      '',
    ].join('\n'),
  );
}

if (args.url && args.target) {
  const run = await load(args.url, args.target, Number(args.events), Number(args.concurrency), Number(args.warmup), Number(args.round));
  // disconnect() right after send() can drop a large message (20,000 latencies) still being written.
  process.send?.(run, () => process.disconnect?.());
} else {
  const exitCode = await rerunWithDaemonFlags();
  if (exitCode === undefined) await main();
  else process.exitCode = exitCode;
}
