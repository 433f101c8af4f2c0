import { describe, expect, it, onTestFinished } from 'vitest';
import { eventually } from '../test/support/net.js';
import { createMetricsRegistry } from './metrics.js';
import { createThreadHeaps, startHeapReports } from './thread-heap.js';

const used = (text: string, thread: string) => new RegExp(`^schoolbridge_thread_heap_used_bytes\\{thread="${thread}"\\} [1-9]`, 'm').test(text);

describe('thread heaps', () => {
  it('exports the main thread\'s heap and each reporting thread\'s, until it stops reporting', async () => {
    let now = 0;
    const registry = createMetricsRegistry();
    const heaps = createThreadHeaps(registry, { now: () => now, intervalMs: 1000 });
    await heaps.start();
    onTestFinished(() => heaps.stop());
    expect(used(await registry.metrics(), 'main')).toBe(true);
    expect(used(await registry.metrics(), 'database')).toBe(false);
    const stop = startHeapReports('database', 1000);
    onTestFinished(stop);
    await eventually(async () => (used(await registry.metrics(), 'database') ? true : undefined), 5000, 'the database thread\'s report');
    expect(await registry.metrics()).toMatch(/^schoolbridge_thread_heap_size_bytes\{thread="database"\} [1-9]/m);
    stop();
    // Three reports missed: the thread has ended.
    now += 3000;
    expect(used(await registry.metrics(), 'database')).toBe(true);
    now += 1;
    expect(used(await registry.metrics(), 'database')).toBe(false);
  });
});
