import { getHeapStatistics } from 'node:v8';
import { BroadcastChannel } from 'node:worker_threads';
import type { Registry } from 'prom-client';
import type { Component } from './lifecycle.js';
import { gauge } from './metrics.js';

/**
 * The heaps of the daemon's threads for `/metrics`. V8's heap options apply to every thread of the
 * process, and each worker thread (the SQLite database thread, the poll's list workers) lets its
 * garbage grow toward its old generation's limit before a first full collection: the RSS climbs
 * for hours while the main thread's heap (`nodejs_heap_*`) stays flat. Each worker reports its own
 * heap on one broadcast channel of the process; the gauges keep what each last said.
 */
const CHANNEL = 'schoolbridge:thread-heap';
/** How often a worker thread reports its heap. */
export const HEAP_REPORT_MS = 10_000;
/** A thread not heard from for this many reports has ended: it is left out. */
const MISSED_REPORTS = 3;

interface HeapReport {
  thread: string;
  used: number;
  size: number;
}

const heapNow = (thread: string): HeapReport => {
  const heap = getHeapStatistics();
  return { thread, used: heap.used_heap_size, size: heap.total_heap_size };
};

/** Reports this thread's heap now and every `intervalMs`, under its name, until the returned function is called. */
export function startHeapReports(thread: string, intervalMs = HEAP_REPORT_MS): () => void {
  const channel = new BroadcastChannel(CHANNEL);
  channel.unref();
  const report = () => channel.postMessage(heapNow(thread));
  report();
  const timer = setInterval(report, intervalMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    channel.close();
  };
}

/**
 * `schoolbridge_thread_heap_used_bytes{thread}` and `schoolbridge_thread_heap_size_bytes{thread}`:
 * the main thread's read at each scrape, the workers' as they last reported (`startHeapReports`)
 * while this component runs.
 */
export function createThreadHeaps(registry: Registry, options: { now?: () => number; intervalMs?: number } = {}): Component {
  const now = options.now ?? Date.now;
  const stale = (options.intervalMs ?? HEAP_REPORT_MS) * MISSED_REPORTS;
  const reports = new Map<string, HeapReport & { at: number }>();
  const current = (): HeapReport[] => {
    for (const [thread, report] of reports) if (now() - report.at > stale) reports.delete(thread);
    return [heapNow('main'), ...reports.values()];
  };
  for (const [name, help, value] of [
    ['schoolbridge_thread_heap_used_bytes', 'V8 heap in use, per thread of the daemon (main, database, list:<stream>)', (r: HeapReport) => r.used],
    ['schoolbridge_thread_heap_size_bytes', 'V8 heap allocated, per thread of the daemon (main, database, list:<stream>)', (r: HeapReport) => r.size],
  ] as const) {
    gauge(registry, name, help, ['thread'], function collect() {
      this.reset();
      for (const report of current()) this.set({ thread: report.thread }, value(report));
    });
  }
  let channel: BroadcastChannel | undefined;
  return {
    name: 'thread heaps',
    async start() {
      channel = new BroadcastChannel(CHANNEL);
      channel.unref();
      channel.onmessage = (event) => {
        const report = (event as { data: HeapReport }).data;
        reports.set(report.thread, { ...report, at: now() });
      };
    },
    async stop() {
      channel?.close();
      channel = undefined;
      reports.clear();
    },
  };
}
