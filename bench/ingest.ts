/**
 * bench:ingest — webhook intake throughput and ack latency (issue 6, "Done when").
 *
 *   npm run bench:ingest [-- --events 5000 --concurrency 50]
 *
 * Starts the real daemon app in this process (createApp, mode daemon: the real fastify server, the
 * real store with its WAL and fsync group commit in a temp dir, the outbox with a `file` connector on
 * `events` and `invoices`, the embedded sandbox as upstream) and, beside it, a bare fastify route that
 * only reads a JSON body and answers 200. A child process (so the load generator does not share the
 * server's event loop) POSTs N distinct signed deliveries at the given concurrency, first to the bare
 * route, then to POST /webhooks/v2, and reports events/s and the p50/p99 time to the answer.
 * Bar: intake/bare ratio ≥ 0.25 and p99 ≤ 25 ms on a 2-core machine.
 */
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
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

const SECRET = 'bench-secret';

interface Run {
  target: string;
  count: number;
  ms: number;
  eventsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Record<number, number>;
}

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '5000' },
    concurrency: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '500' },
    // child-process options
    url: { type: 'string' },
    target: { type: 'string' },
    offset: { type: 'string', default: '0' },
  },
});

/** The load generator: N requests prepared up front, `concurrency` in flight at any time. */
async function load(url: string, target: string, count: number, concurrency: number, offset: number): Promise<Run> {
  const now = Math.floor(Date.now() / 1000);
  const requests = Array.from({ length: count }, (_, i) => {
    const body = eventBody('invoice.created', invoice({ id: offset + i + 1, numberId: offset + i + 1 }));
    return { body, header: signatureHeader(SECRET, body, now) };
  });
  const pool = new Pool(url, { connections: concurrency, pipelining: 1 });
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const { body, header } = requests[next++]!;
      const started = performance.now();
      const response = await pool.request({ method: 'POST', path: target, body, headers: { 'content-type': 'application/json', 'webhook-signature': header } });
      await response.body.dump();
      latencies.push(performance.now() - started);
      statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const ms = performance.now() - started;
  await pool.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { target, count, ms, eventsPerSecond: (count / ms) * 1000, p50Ms: at(0.5), p99Ms: at(0.99), statuses };
}

function inChild(url: string, target: string, count: number, concurrency: number, offset: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), [
      '--url', url, '--target', target, '--events', String(count), '--concurrency', String(concurrency), '--offset', String(offset),
    ], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (message) => resolve(message as Run));
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
    connectors: [{ name: 'files', type: 'file', streams: ['events', 'invoices'], dir: path.join(dir, 'out') }],
    log: { level: 'silent' },
  });
  const app = await createApp({ config, log, mode: 'daemon' });
  await app.start();
  const bare = Fastify({ bodyLimit: config.webhooks.bodyLimitBytes });
  bare.post('/bare', async (request) => ({ ok: typeof request.body === 'object' }));
  await bare.listen({ host: '127.0.0.1', port: 0 });
  const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}`;
  try {
    await inChild(bareUrl, '/bare', warmup, concurrency, 0);
    await inChild(app.server!.url, '/webhooks/v2', warmup, concurrency, 1_000_000);
    const baseline = await inChild(bareUrl, '/bare', events, concurrency, 0);
    const intake = await inChild(app.server!.url, '/webhooks/v2', events, concurrency, 0);
    const stored = app.store.size(INBOX);
    report(baseline, intake, events, concurrency, stored - warmup);
  } finally {
    await bare.close();
    await app.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

function report(baseline: Run, intake: Run, events: number, concurrency: number, stored: number): void {
  const row = (name: string, run: Run) =>
    `${name.padEnd(26)} ${run.eventsPerSecond.toFixed(0).padStart(8)} ev/s   p50 ${run.p50Ms.toFixed(2).padStart(6)} ms   p99 ${run.p99Ms.toFixed(2).padStart(6)} ms   statuses ${JSON.stringify(run.statuses)}`;
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
  const run = await load(args.url, args.target, Number(args.events), Number(args.concurrency), Number(args.offset));
  process.send?.(run);
  process.disconnect?.();
} else {
  await main();
}
