/**
 * bench:client — fetching a big school's student list.
 *
 *   npm run bench:client [-- --students 100000 --runs 2]
 *
 * Starts the sandbox with N students in this process, then measures each way of reading
 * GET /api/v2/students in a fresh child process, so that peak RSS is that approach's own and the
 * sandbox's work never shows up as a stall of the reader:
 *   baseline  undici fetch + text() + JSON.parse (what a naive client does)
 *   client    createUpstreamClient().fetchList() into the list worker, as the poll reads a list: the
 *             body's bytes go to a worker thread that splits, normalizes, validates and hashes them
 * For each: wall time to a parsed list, peak RSS (VmHWM) and the longest event-loop stall
 * (perf_hooks.monitorEventLoopDelay, 1 ms resolution), plus its p99.
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, fetch } from 'undici';
import { createSandbox } from '../sandbox/index.js';
import { createUpstreamClient } from '../src/upstream/index.js';
import { createListWorker } from '../src/upstream/list/index.js';

const TOKEN = 'bench-token';
type Phase = 'baseline' | 'client';

interface Measurement {
  phase: Phase;
  students: number;
  ms: number;
  peakRssMb: number;
  maxStallMs: number;
  p99StallMs: number;
  peakHeapMb: number;
  peakBuffersMb: number;
  /** Longest single garbage-collection pause: stalls no yielding can prevent. */
  maxGcMs: number;
}

const { values: args } = parseArgs({
  options: {
    students: { type: 'string', default: '100000' },
    runs: { type: 'string', default: '2' },
    phase: { type: 'string' },
    url: { type: 'string' },
  },
});

/** One phase, in a child process: the numbers are this approach's alone. */
async function measure(phase: Phase, baseUrl: string): Promise<Measurement> {
  const agent = new Agent();
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  let maxGcMs = 0;
  // Sampled between turns of the loop: where the memory is (JS heap vs buffers outside it).
  let peakHeap = 0;
  let peakBuffers = 0;
  const sampler = setInterval(() => {
    const usage = process.memoryUsage();
    peakHeap = Math.max(peakHeap, usage.heapUsed);
    peakBuffers = Math.max(peakBuffers, usage.arrayBuffers);
  }, 10);
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) maxGcMs = Math.max(maxGcMs, entry.duration);
  });
  gc.observe({ entryTypes: ['gc'] });
  histogram.enable();
  const started = performance.now();
  let students: number;
  if (phase === 'baseline') {
    const response = await fetch(`${baseUrl}/api/v2/students`, { dispatcher: agent, headers: { authorization: `Bearer ${TOKEN}` } });
    const text = await response.text();
    students = (JSON.parse(text) as { data: { students: unknown[] } }).data.students.length;
  } else {
    const client = createUpstreamClient({ baseUrl, auth: { token: TOKEN }, dispatcher: agent, timeoutMs: 600_000 });
    const lists = createListWorker();
    let parsed = 0;
    await client.fetchList('students', (body) => lists.parse('students', body, { useIndex: false }, { batch: (batch) => void (parsed += batch.keys.length) }));
    await lists.stop();
    students = parsed;
  }
  const ms = performance.now() - started;
  // Let the histogram's timer fire once more: a stall at the very end is only recorded when it does.
  await delay(20);
  histogram.disable();
  gc.disconnect();
  clearInterval(sampler);
  await agent.close();
  return {
    phase, students, ms: Math.round(ms),
    peakHeapMb: Math.round(peakHeap / 1e6),
    peakBuffersMb: Math.round(peakBuffers / 1e6),
    peakRssMb: peakRssMb(),
    maxStallMs: round1(histogram.max / 1e6),
    p99StallMs: round1(histogram.percentile(99) / 1e6),
    maxGcMs: round1(maxGcMs),
  };
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/**
 * Peak RSS of this process image. On Linux VmHWM, because getrusage's maxRSS survives exec: a
 * forked child would report its parent's (the sandbox's) peak if that was higher.
 */
function peakRssMb(): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match) return Math.round(Number(match[1]) / 1024);
  } catch {
    // not Linux
  }
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

function runChild(phase: Phase, url: string): Promise<Measurement> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ['--phase', phase, '--url', url], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (message) => resolve(message as Measurement));
    child.once('error', reject);
    // After its result this rejects nothing; before it, an exit is a failure whatever its code.
    child.once('exit', (code) => reject(new Error(`${phase} child exited with ${code} before it sent its result`)));
  });
}

async function main(): Promise<void> {
  const students = Number(args.students);
  const runs = Number(args.runs);
  const sandbox = createSandbox({ students, staticToken: TOKEN });
  await sandbox.start();
  try {
    // Render and cache the sandbox's list body once, so no phase pays for it.
    const agent = new Agent();
    const warm = await fetch(`${sandbox.url}/api/v2/students`, { dispatcher: agent, headers: { authorization: `Bearer ${TOKEN}` } });
    const bytes = (await warm.arrayBuffer()).byteLength;
    await agent.close();
    console.log(`sandbox: ${students} students, list body ${(bytes / 1e6).toFixed(1)} MB, node ${process.version}`);
    const results: Measurement[] = [];
    for (let run = 0; run < runs; run++) {
      for (const phase of ['baseline', 'client'] as const) results.push(await runChild(phase, sandbox.url));
    }
    const columns: [string, (r: Measurement) => string | number][] = [
      ['phase', (r) => r.phase],
      ['students', (r) => r.students],
      ['time ms', (r) => r.ms],
      ['peak RSS MB', (r) => r.peakRssMb],
      ['peak heap MB', (r) => r.peakHeapMb],
      ['peak buffers MB', (r) => r.peakBuffersMb],
      ['longest stall ms', (r) => r.maxStallMs],
      ['p99 stall ms', (r) => r.p99StallMs],
      ['longest GC ms', (r) => r.maxGcMs],
    ];
    console.log(`\n${columns.map(([name], i) => (i === 0 ? name.padEnd(name.length + 4) : name)).join('  ')}`);
    for (const r of results) {
      console.log(columns.map(([name, get], i) => (i === 0 ? String(get(r)).padEnd(name.length + 4) : String(get(r)).padStart(name.length))).join('  '));
    }
  } finally {
    await sandbox.stop();
  }
}

if (args.phase !== undefined && args.url !== undefined) {
  const result = await measure(args.phase as Phase, args.url);
  // disconnect() right after send() can drop a message still being written.
  process.send?.(result, () => process.disconnect?.());
} else {
  await main();
}
