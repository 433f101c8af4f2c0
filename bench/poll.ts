/**
 * bench:poll (issue 7). A sandbox with 100,000 students (200,000 users) in a child process, the whole
 * daemon (createApp, daemon mode: store on disk, outbox delivering to a file connector, webhook intake)
 * in this one, and a webhook sender in a worker thread posting signed invoice events at 50/s.
 * Measures a full first cycle, a no-change cycle and a 1%-changed cycle, each beside a baseline
 * taken right before it: fetching both lists and JSON.parse-ing them (in a worker thread, see
 * baseline()). Prints the figures; no bars are enforced here (issue bars: full and 1% cycles ≤ 2.0×
 * the baseline, webhook p99 ≤ 50 ms).
 *
 * Each sequence runs once per `poll.initial` mode, in a process and store of its own: `baseline` records the
 * first cycle silently, `emit` also emits all 300,000 records as created changes to the file
 * connector: the cycle leaves them to its backlog, which enqueues them after it, paced on the
 * deliveries running on the same event loop (printed as the drain before the next cycle, with the
 * time until all was delivered) — every figure names its mode.
 *
 *   npm run bench:poll [-- --students 100000] [-- --initial emit|baseline]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { pino } from 'pino';
import { Agent, request } from 'undici';
import { createApp, type App } from '../src/app.js';
import { configSchema } from '../src/config/schema.js';
import { snapshotCollection, POLLED_STREAMS } from '../src/poll/snapshot.js';
import { countAbove, histogramBuckets } from './daemon-histogram.js';

const STUDENTS = Number(argValue('--students') ?? 100_000);
const SECRET = 'bench-secret';
const TOKEN = 'bench-token';
const WEBHOOK_RATE = 50;
const MODES = (argValue('--initial') ? [argValue('--initial')] : ['baseline', 'emit']) as ('emit' | 'baseline')[];

function argValue(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

async function startSandbox(): Promise<{ url: string; child: ChildProcess }> {
  const bin = path.join(import.meta.dirname, '..', 'bin', 'schoolbridge.js');
  const child = spawn(process.execPath, [bin, 'sandbox', '--port', '0', '--students', String(STUDENTS), '--client-secret', SECRET, '--static-token', TOKEN], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /http:\/\/127\.0\.0\.1:\d+/.exec(output);
      if (match) resolve(match[0]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`sandbox exited (${code}): ${output.slice(-500)}`)));
  });
  // From here on its output is read and dropped (a full pipe would block the sandbox): it logs for the
  // whole run, up to megabytes at once, and decoding and scanning all of it on this thread (the
  // daemon's) stalled it for up to 300 ms late in a run.
  for (const stream of [child.stdout, child.stderr]) stream?.removeAllListeners('data').on('data', () => {});
  return { url, child };
}

/**
 * The baseline: GET both lists and JSON.parse them, as a client with no streaming would. It runs in a
 * worker thread, on a heap of its own: run on this thread right before each cycle, it left ~1 GB of
 * parsed lists for the daemon's garbage collector to reclaim during the very cycle it was compared
 * with (mark-compact pauses of 86-93 ms in a no-change cycle). Timed inside the worker, from the first
 * request to the last parse, with undici's `request` as before.
 */
function baseline(url: string): Promise<number> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { Agent, request } = require('undici');
    (async () => {
      const dispatcher = new Agent();
      const started = performance.now();
      for (const route of ['/api/v2/students', '/api/v2/users']) {
        // A fresh connection each time, as before (keep-alive sockets idle through a long cycle may close).
        const response = await request(workerData.url + route, { dispatcher, headers: { authorization: 'Bearer ' + workerData.token, connection: 'close' } });
        JSON.parse(await response.body.text());
      }
      parentPort.postMessage(performance.now() - started);
      await dispatcher.close();
    })();`; // a failure rejects through the worker's error event
  const worker = new Worker(code, { eval: true, workerData: { url, token: TOKEN } });
  return new Promise<number>((resolve, reject) => {
    worker.once('message', (ms: number) => void worker.terminate().then(() => resolve(ms)));
    worker.once('error', reject);
  });
}

/**
 * A worker thread (its own event loop) posting signed webhooks; it measures ack latencies. It warms up
 * first: 25 webhooks whose latencies are not counted, sent before `ready` resolves and the measured
 * work starts. A fresh thread's first `fetch` loads and compiles undici's fetch: 47 ms against a bare
 * `node:http` server with nothing else running (then 20 ms, then 2-4 ms), 80-130 ms beside a cycle.
 * With 80-100 webhooks in a no-change or 1% cycle that one request was the p99, in every phase, idle
 * included; a real upstream's sender is a long-running process.
 */
function startSender(target: string): { ready: Promise<void>; stop(): Promise<number[]> } {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const { createHmac } = require('node:crypto');
    const WARM_UP = 25;
    const latencies = [];
    let n = 0, inflight = 0, warmed = 0;
    const send = async () => {
      n += 1; inflight += 1;
      const measured = warmed >= WARM_UP;
      const body = JSON.stringify({ event: 'invoice.created', object: { id: 900000 + n + workerData.offset, userId: 1, description: 'bench' } });
      const ts = Math.floor(Date.now() / 1000);
      const signature = createHmac('sha256', workerData.secret).update(ts + ';' + body).digest('hex');
      const started = performance.now();
      let latency;
      try {
        const r = await fetch(workerData.target, { method: 'POST', body, headers: { 'content-type': 'application/json', 'webhook-signature': JSON.stringify({ timestamp: ts, signature }) } });
        await r.arrayBuffer();
        latency = r.status === 200 ? performance.now() - started : -r.status;
      } catch (e) { latency = -1; }
      inflight -= 1;
      if (measured) latencies.push(latency);
      else if (++warmed === WARM_UP) parentPort.postMessage('ready');
    };
    const timer = setInterval(send, 1000 / workerData.rate);
    parentPort.on('message', async () => {
      clearInterval(timer);
      while (inflight > 0) await new Promise((r) => setTimeout(r, 10));
      parentPort.postMessage(latencies);
    });`;
  const worker = new Worker(code, { eval: true, workerData: { target, secret: SECRET, rate: WEBHOOK_RATE, offset: Math.floor(Math.random() * 1e6) * 1000 } });
  const ready = new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
  });
  return {
    ready,
    stop: () =>
      new Promise<number[]>((resolve) => {
        worker.once('message', (latencies: number[]) => void worker.terminate().then(() => resolve(latencies)));
        worker.postMessage('stop');
      }),
  };
}

const percentile = (values: number[], p: number) => {
  const sorted = values.filter((v) => v >= 0).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

/** Webhook ack latencies (measured by the sender thread) and this event loop's delays while `work` runs. */
async function underLoad<T>(app: App, work: () => Promise<T>): Promise<{ value: T; ms: number; sent: number; webhooks: string }> {
  const sender = startSender(`${app.server?.url}/webhooks/v2`);
  await sender.ready;
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  // Garbage collection of this thread (pauses of the one event loop) and the heap's high-water mark.
  const gc = { total: 0, max: 0 };
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.total += entry.duration;
      gc.max = Math.max(gc.max, entry.duration);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  let heapPeak = process.memoryUsage().heapUsed;
  const sampler = setInterval(() => {
    heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
  }, 100);
  const before = await daemonCounts(app);
  const started = performance.now();
  const value = await work();
  const ms = performance.now() - started;
  const after = await daemonCounts(app);
  clearInterval(sampler);
  observer.disconnect();
  loop.disable();
  const latencies = await sender.stop();
  const failed = latencies.filter((v) => v < 0).length;
  const webhooks =
    `webhooks ${latencies.length} sent, ack p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, ` +
    `max ${percentile(latencies, 100).toFixed(1)} ms, over 50 ms ${latencies.filter((v) => v > 50).length}, failed ${failed}; event-loop delay p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms, max ${(loop.max / 1e6).toFixed(1)} ms\n` +
    `             GC ${gc.total.toFixed(0)} ms in all, longest pause ${gc.max.toFixed(0)} ms; heap used peak ${(heapPeak / 1024 / 1024).toFixed(0)} MiB (sampled every 100 ms)\n` +
    `             daemon side: acks over 25 ms ${after.ack.over25 - before.ack.over25}, over 50 ms ${after.ack.over50 - before.ack.over50} (request read to answer); ` +
    `WAL fsyncs ${after.fsync.all - before.fsync.all}, over 25 ms ${after.fsync.over25 - before.fsync.over25}, over 50 ms ${after.fsync.over50 - before.fsync.over50}`;
  return { value, ms, sent: latencies.length, webhooks };
}

/** How many observations a histogram of the daemon's has so far, in all and over 25 and 50 ms. */
async function histogramCounts(app: App, name: string): Promise<{ all: number; over25: number; over50: number }> {
  const buckets = await histogramBuckets(app.metrics, name);
  return { all: buckets.at(-1)?.count ?? 0, over25: countAbove(buckets, 0.025), over50: countAbove(buckets, 0.05) };
}

/** WAL fsyncs and server-side acknowledgement times, from the daemon's own histograms. */
async function daemonCounts(app: App) {
  return { fsync: await histogramCounts(app, 'schoolbridge_store_fsync_seconds'), ack: await histogramCounts(app, 'schoolbridge_webhook_ack_seconds') };
}

/** The cycle measured last, for the time until its changes were all delivered. */
let last: { name: string; ms: number } | undefined;

async function measureCycle(app: App, name: string, url: string): Promise<void> {
  // Deliveries of the previous cycle's changes finish first, so each figure is about its own cycle.
  // After a first `emit` cycle this is where its 300,000 changes go into the outbox (the backlog,
  // poll/backlog.ts, at the daemon's own pace) and are delivered: measured under the same webhooks,
  // and added to the cycle for the time until everything is delivered.
  const drain = await underLoad(app, async () => {
    await app.poll.poller.whenBacklogDone();
    await app.outbox.whenIdle();
  });
  if (drain.ms > 50) {
    console.log(`             (the previous cycle's changes enqueued and delivered in ${drain.ms.toFixed(0)} ms after it; ${drain.webhooks.trim()})`);
    if (last) console.log(`             (so all of ${last.name}'s changes were delivered ${((last.ms + drain.ms) / 1000).toFixed(1)} s after it started)`);
  }
  // Likewise the store's checkpoint of the previous cycle's writes (after a first cycle, the whole
  // snapshot): it is measured here, webhooks included, instead of landing inside the next cycle.
  const checkpoint = await underLoad(app, () => app.store.checkpoint());
  if (checkpoint.ms > 50) {
    // A short checkpoint may see no webhook at all: then there are no latencies to show.
    const figures = checkpoint.sent > 0 ? `; ${checkpoint.webhooks.trim()}` : '';
    console.log(`             (checkpoint of the previous writes first: ${checkpoint.ms.toFixed(0)} ms${figures})`);
  }
  const base = await baseline(url);
  const { value: result, ms, webhooks } = await underLoad(app, () => app.poll.poller.runCycle({ trigger: 'bench' }));
  last = { name, ms };
  const s = result.streams;
  const p = result.phases;
  console.log(
    `${name.padEnd(12)} ${result.outcome} ${ms.toFixed(0).padStart(7)} ms  baseline ${base.toFixed(0).padStart(6)} ms  ratio ${(ms / base).toFixed(2)}\n` +
      `             read and diff ${p.readMs} ms, checks ${p.checkMs} ms, commit ${p.commitMs} ms\n` +
      `             students +${s.students.created} ~${s.students.updated} -${s.students.deleted}, users +${s.users.created} ~${s.users.updated} -${s.users.deleted}\n` +
      `             ${webhooks}`,
  );
}

async function changeOnePercent(url: string, dispatcher: Agent, app: App): Promise<void> {
  const ids = [...app.store.entries(snapshotCollection('students'))].map(([key]) => Number(key));
  const step = Math.floor(100);
  for (let i = 0; i < ids.length; i += step) {
    const response = await request(`${url}/_sandbox/students/${ids[i]}`, {
      dispatcher, method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ lastName: `Zmiana${i}` }),
    });
    await response.body.dump();
  }
}

function snapshotBytes(app: App): string {
  return POLLED_STREAMS.map((stream) => {
    let chars = 0;
    let count = 0;
    for (const [, value] of app.store.entries<string>(snapshotCollection(stream))) {
      chars += Buffer.byteLength(value);
      count += 1;
    }
    return `${stream}: ${count} records, ${(chars / 1024 / 1024).toFixed(1)} MiB in memory (UTF-8), ${(chars / count).toFixed(0)} B/record`;
  }).join('; ');
}

/**
 * Each mode in a process of its own when both are asked for: run one after the other in one process,
 * the second mode's heap started with the first's uncollected garbage (~1 GB) and its peak RSS was
 * the process's, not its own.
 */
async function eachModeApart(): Promise<void> {
  for (const mode of MODES) {
    const script = fileURLToPath(import.meta.url);
    const child = spawn(process.execPath, [...process.execArgv, script, '--initial', mode, '--students', String(STUDENTS)], { stdio: 'inherit' });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`bench:poll --initial ${mode} exited with ${code}`);
  }
}

async function main(): Promise<void> {
  if (MODES.length > 1) return eachModeApart();
  const dispatcher = new Agent({ connections: 4 });
  console.log(`bench:poll — ${STUDENTS} students; node ${process.version}; modes ${MODES.join(', ')}`);
  const t0 = performance.now();
  const sandbox = await startSandbox();
  console.log(`sandbox ready at ${sandbox.url} in ${(performance.now() - t0).toFixed(0)} ms (child process)`);
  try {
    console.log(`warm-up baseline ${(await baseline(sandbox.url)).toFixed(0)} ms (renders the sandbox's list cache)`);
    for (const mode of MODES) await runMode(mode, sandbox.url, dispatcher);
    console.log(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB (whole run)`);
  } finally {
    sandbox.child.kill('SIGTERM');
    await dispatcher.close();
  }
}

/** One daemon with a fresh store and `poll.initial: mode`: full, no-change and 1%-changed cycles. */
async function runMode(mode: 'emit' | 'baseline', url: string, dispatcher: Agent): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-poll-'));
  console.log(`--- poll.initial: ${mode} (store ${dir})`);
  const config = configSchema.parse({
    upstream: { baseUrl: url, clientId: 'sandbox-client', clientSecret: SECRET, timeoutMs: 600_000 },
    server: { port: 0 },
    webhooks: { reconcileOnStart: false },
    poll: { schedule: '0 0 1 1 *', onStart: false, initial: mode },
    export: { onStart: false },
    store: { dir: path.join(dir, 'store') },
    connectors: [{ name: 'files', type: 'file', streams: ['students', 'users', 'invoices', 'events'], dir: path.join(dir, 'out') }],
  });
  const app = await createApp({ config, log: pino({ level: 'warn' }), mode: 'daemon' });
  await app.start();
  try {
    const idle = await underLoad(app, () => new Promise((resolve) => setTimeout(resolve, 3000)));
    console.log(`idle (no cycle, 3 s): ${idle.webhooks}`);
    await measureCycle(app, `full/${mode}`, url);
    await measureCycle(app, 'no-change', url);
    await changeOnePercent(url, dispatcher, app);
    // The sandbox renders its list again after the PATCHes: that one slow answer must not go into
    // the 1% cycle's baseline (it made the ratio look ~2× better than it is).
    console.log(`             (sandbox re-render after the changes: ${(await baseline(url)).toFixed(0)} ms, not counted)`);
    await measureCycle(app, '1% changed', url);
    console.log(`snapshot ${snapshotBytes(app)}`);
    await app.store.checkpoint();
    for (const stream of POLLED_STREAMS) {
      const file = path.join(config.store.dir, `${snapshotCollection(stream)}.db.json`);
      const size = await stat(file).then((s) => s.size, () => 0);
      console.log(`snapshot on disk ${stream}: ${(size / 1024 / 1024).toFixed(1)} MiB (${(size / app.store.size(snapshotCollection(stream))).toFixed(0)} B/record, JSON-escaped)`);
    }
    console.log(`peak RSS so far ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
  } finally {
    await app.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
