import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { App } from '../src/app.js';
import { countAbove, histogramBuckets } from './daemon-histogram.js';

/** How bench:poll's webhook sender signs and how many webhooks it sends a second. */
export interface SenderOptions {
  secret: string;
  rate: number;
}

/**
 * A worker thread (its own event loop) posting signed webhooks; it measures ack latencies. It warms up
 * first: 25 webhooks whose latencies are not counted, sent before `ready` resolves and the measured
 * work starts. A fresh thread's first `fetch` loads and compiles undici's fetch, far slower than every
 * request after it: in a no-change or 1% cycle, with few webhooks, that one request would be the p99 of
 * every phase, idle included, while a real upstream's sender is a long-running process.
 */
function startSender(target: string, options: SenderOptions): { ready: Promise<void>; stop(): Promise<number[]> } {
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
  const worker = new Worker(code, { eval: true, workerData: { target, secret: options.secret, rate: options.rate, offset: Math.floor(Math.random() * 1e6) * 1000 } });
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
export async function underLoad<T>(app: App, sender: SenderOptions, work: () => Promise<T>): Promise<{ value: T; ms: number; sent: number; webhooks: string; p99: number }> {
  const thread = startSender(`${app.server?.url}/webhooks/v2`, sender);
  await thread.ready;
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
  let rssPeak = process.memoryUsage.rss();
  let externalPeak = process.memoryUsage().external;
  const sampler = setInterval(() => {
    const usage = process.memoryUsage();
    heapPeak = Math.max(heapPeak, usage.heapUsed);
    rssPeak = Math.max(rssPeak, usage.rss);
    externalPeak = Math.max(externalPeak, usage.external);
  }, 100);
  const before = await daemonCounts(app);
  const started = performance.now();
  const value = await work();
  const ms = performance.now() - started;
  const after = await daemonCounts(app);
  clearInterval(sampler);
  observer.disconnect();
  loop.disable();
  const latencies = await thread.stop();
  const failed = latencies.filter((v) => v < 0).length;
  const webhooks =
    `webhooks ${latencies.length} sent, ack p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, ` +
    `max ${percentile(latencies, 100).toFixed(1)} ms, over 50 ms ${latencies.filter((v) => v > 50).length}, failed ${failed}; event-loop delay p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms, max ${(loop.max / 1e6).toFixed(1)} ms\n` +
    `             GC ${gc.total.toFixed(0)} ms in all, longest pause ${gc.max.toFixed(0)} ms; heap used peak ${(heapPeak / 1024 / 1024).toFixed(0)} MiB, external ${(externalPeak / 1024 / 1024).toFixed(0)} MiB, RSS ${(rssPeak / 1024 / 1024).toFixed(0)} MiB (all threads; sampled every 100 ms)\n` +
    `             daemon side: acks over 25 ms ${after.ack.over25 - before.ack.over25}, over 50 ms ${after.ack.over50 - before.ack.over50} (request read to answer); ` +
    `store transactions over 25 ms ${after.transactions.over25 - before.transactions.over25} of ${after.transactions.all - before.transactions.all}, ` +
    `syncs over 25 ms ${after.syncs.over25 - before.syncs.over25} of ${after.syncs.all - before.syncs.all}`;
  return { value, ms, sent: latencies.length, webhooks, p99: percentile(latencies, 99) };
}

/** How many observations a histogram of the daemon's has so far, in all and over 25 and 50 ms. */
async function histogramCounts(app: App, name: string): Promise<{ all: number; over25: number; over50: number }> {
  const buckets = await histogramBuckets(app.metrics, name);
  return { all: buckets.at(-1)?.count ?? 0, over25: countAbove(buckets, 0.025), over50: countAbove(buckets, 0.05) };
}

/** Server-side acknowledgement times and the store's transactions and syncs, from the daemon's own histograms. */
async function daemonCounts(app: App) {
  return {
    ack: await histogramCounts(app, 'schoolbridge_webhook_ack_seconds'),
    transactions: await histogramCounts(app, 'schoolbridge_store_transaction_seconds'),
    syncs: await histogramCounts(app, 'schoolbridge_store_sync_seconds'),
  };
}
