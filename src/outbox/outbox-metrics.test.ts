import { describe, expect, it } from 'vitest';
import { createMetricsRegistry } from '../metrics.js';
import { createOutboxMetrics } from './outbox-metrics.js';

describe('outbox metrics', () => {
  it('reads the counts once per scrape for both gauges, and again at the next scrape', async () => {
    const registry = createMetricsRegistry();
    let reads = 0;
    let dead = 1;
    createOutboxMetrics(registry, async () => {
      reads += 1;
      return [{ connector: 'files', depth: 4, dead }];
    });
    const first = await registry.metrics();
    expect(reads).toBe(1);
    expect(first).toContain('schoolbridge_outbox_depth{connector="files"} 4');
    expect(first).toContain('schoolbridge_outbox_dead{connector="files"} 1');
    dead = 2;
    const second = await registry.metrics();
    expect(reads).toBe(2);
    expect(second).toContain('schoolbridge_outbox_dead{connector="files"} 2');
  });

  it('leaves both gauges out of a scrape while the store cannot be read', async () => {
    const registry = createMetricsRegistry();
    createOutboxMetrics(registry, () => Promise.reject(new Error('store down')));
    const text = await registry.metrics();
    expect(text).not.toContain('schoolbridge_outbox_depth{');
    expect(text).not.toContain('schoolbridge_outbox_dead{');
  });
});
