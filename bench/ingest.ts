/**
 * bench:ingest — webhook intake throughput and ack latency (issue 6, "Done when").
 *
 *   npm run bench:ingest [-- --events 5000 --concurrency 50 --warmup 5000 --no-connector --delivery-concurrency 1]
 *
 * Starts the real daemon app in this process (createApp, mode daemon: the real fastify server, the
 * real store with its WAL and fsync group commit in a temp dir, the outbox with a `file` connector on
 * `events` and `invoices`, the embedded sandbox as upstream) and, beside it, a bare fastify route that
 * only reads a JSON body and answers 200. A child process (so the load generator does not share the
 * server's event loop) POSTs warm-up deliveries and then, without a pause, N distinct measured ones at
 * the given concurrency, first to the bare route, then to POST /webhooks/v2, and reports events/s and
 * the p50/p99 time to the answer over the N. Bar: intake/bare ratio ≥ 0.25 and p99 ≤ 25 ms on a 2-core
 * machine. A larger --events (20,000) also takes a store checkpoint inside the measured window.
 * It also prints the WAL fsyncs of the measured run over 10 and 25 ms (the daemon's own histogram):
 * one fsync over 25 ms holds all 50 deliveries in flight, 1% of a 5,000 run, and so the p99.
 */
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { pino } from 'pino';
import { Pool } from 'undici';
import { createApp } from '../src/app.js';
import { configSchema } from '../src/config/index.js';
import { signatureHeader } from '../src/signature/index.js';
import { INBOX } from '../src/webhooks/index.js';
import { eventBody, invoice } from '../src/webhooks/testing.js';
import { bucketQuantile, countAbove, histogramBuckets, type Bucket } from './daemon-histogram.js';

const SECRET = 'bench-secret';
const FSYNC_HISTOGRAM = 'schoolbridge_store_fsync_seconds';

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
  const pool = new Pool(url, { connections: concurrency, pipelining: 1 });
  const requests = [...prepare(warmup, 1_000_000), ...prepare(count, 0)];
  let cpu = process.cpuUsage();
  const run = await measure(pool, target, requests, concurrency, warmup, () => {
    cpu = process.cpuUsage();
    process.send?.('measuring');
  });
  const used = process.cpuUsage(cpu);
  run.clientCpuMicros = (used.user + used.system) / count;
  await pool.close();
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
  pool: Pool, target: string, requests: { body: string; header: string }[], concurrency: number, skip: number, onWindow: () => void,
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
      const response = await pool.request({ method: 'POST', path: target, body, headers: { 'content-type': 'application/json', 'webhook-signature': header } });
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
function inChild(url: string, target: string, count: number, concurrency: number, warmup: number, onWindow: () => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [
      '--url', url, '--target', target, '--events', String(count), '--concurrency', String(concurrency), '--warmup', String(warmup),
    ], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.on('message', (message) => {
      if (message === 'measuring') onWindow();
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
  const dir = await mkdtemp(path.join(tmpdir(), 'schoolbridge-bench-'));
  const log = pino({ level: 'silent' });
  const config = configSchema.parse({
    upstream: { baseUrl: 'sandbox', clientId: 'bench-client', clientSecret: SECRET },
    sandbox: { students: 1 },
    server: { host: '127.0.0.1', port: 0 },
    webhooks: { reconcileOnStart: false },
    poll: { onStart: false, schedule: '0 0 1 1 *' },
    export: { onStart: false, schedule: '0 0 1 1 *' },
    store: { dir: path.join(dir, 'store') },
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
    let cpu = process.cpuUsage();
    const baseline = await inChild(bareUrl, '/bare', events, concurrency, warmup, () => {
      cpu = process.cpuUsage();
    });
    const bareCpu = process.cpuUsage(cpu);
    cpu = process.cpuUsage();
    let fsyncBefore: Promise<Bucket[]> = Promise.resolve([]);
    const loopDelay = monitorEventLoopDelay({ resolution: 1 });
    loopDelay.enable();
    const intake = await inChild(app.server!.url, '/webhooks/v2', events, concurrency, warmup, () => {
      loopDelay.reset();
      cpu = process.cpuUsage();
      // Read now (the histogram has no collect hook, so its values are taken in this call).
      fsyncBefore = histogramBuckets(app.metrics, FSYNC_HISTOGRAM);
    });
    loopDelay.disable();
    const fsyncAfter = await histogramBuckets(app.metrics, FSYNC_HISTOGRAM);
    const before = await fsyncBefore;
    const since = (buckets: Bucket[], seconds: number) => countAbove(buckets, seconds) - countAbove(before, seconds);
    const fsyncs = { all: (fsyncAfter.at(-1)?.count ?? 0) - (before.at(-1)?.count ?? 0), over10: since(fsyncAfter, 0.01), over25: since(fsyncAfter, 0.025) };
    await app.outbox.whenIdle();
    const intakeCpu = process.cpuUsage(cpu);
    const perEvent = (usage: NodeJS.CpuUsage) => ((usage.user + usage.system) / events).toFixed(0);
    const stored = app.store.size(INBOX);
    report(baseline, intake, events, concurrency, stored - warmup);
    // Where the time goes, seen from the server: its own answer-time histogram (warm-up included)
    // and how late its event loop ran timers (CPU contention) during the intake run.
    const ack = await histogramBuckets(app.metrics, 'schoolbridge_webhook_ack_seconds', (labels) => labels.status === '200');
    process.stdout.write(`server side: ack p50 ≤ ${bucketQuantile(ack, 0.5)} s, p99 ≤ ${bucketQuantile(ack, 0.99)} s (histogram buckets); event-loop delay p50 ${(loopDelay.percentile(50) / 1e6).toFixed(1)} ms, p99 ${(loopDelay.percentile(99) / 1e6).toFixed(1)} ms, max ${(loopDelay.max / 1e6).toFixed(1)} ms\n` +
      `server CPU per request: bare ${perEvent(bareCpu)} µs, intake ${perEvent(intakeCpu)} µs (measured run only; store, outbox and file connector included, until the outbox is idle)\n` +
      `slowest WAL fsync: ${app.store.stats().slowestFsyncMs} ms (warm-up included; a slow disk shows here)\n` +
      // Every acknowledgement waits for a WAL fsync, and with 50 in flight one slow fsync delays about
      // 50 of them: 1% of 5,000, i.e. the p99. These say whether a missed p99 was the disk's.
      `WAL fsyncs in the measured run: ${fsyncs.all}, over 10 ms ${fsyncs.over10}, over 25 ms ${fsyncs.over25}\n`);
  } finally {
    await bare.close();
    await app.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

function report(baseline: Run, intake: Run, events: number, concurrency: number, stored: number): void {
  const row = (name: string, run: Run) =>
    `${name.padEnd(26)} ${run.eventsPerSecond.toFixed(0).padStart(8)} ev/s   p50 ${run.p50Ms.toFixed(2).padStart(6)} ms   p99 ${run.p99Ms.toFixed(2).padStart(6)} ms   client CPU ${run.clientCpuMicros?.toFixed(0)} µs/req   statuses ${JSON.stringify(run.statuses)}`;
  const ratio = intake.eventsPerSecond / baseline.eventsPerSecond;
  const ok = ratio >= 0.25 && intake.p99Ms <= 25;
  process.stdout.write(
    [
      `bench:ingest — ${events} signed deliveries, concurrency ${concurrency}, ${process.version}, ${availableParallelism()} CPUs`,
      row('bare fastify route', baseline),
      row('POST /webhooks/v2 (fsync)', intake),
      `stored events: ${stored} of ${events}`,
      `ratio intake/bare: ${ratio.toFixed(2)}   bar: ratio ≥ 0.25 and p99 ≤ 25 ms → ${ok ? 'met' : 'NOT MET'}`,
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
