import type { Counter, Histogram, Registry } from 'prom-client';
import { counter, gauge, histogram } from '../metrics.js';

export interface OutboxMetrics {
  deliveries: Counter<'connector' | 'outcome'>;
  /** Wall time of one `deliver` call (a batch). */
  duration: Histogram<'connector'>;
  /** From enqueue (or retry by hand) to done: what a reader of the target waits. */
  lag: Histogram<'connector'>;
}

type Counts = Iterable<{ connector: string; depth: number; dead: number }>;

/**
 * Queue depth and dead count are read from the store when scraped (`counts`), so they are never stale
 * and cost nothing between scrapes; a scrape while the store is down leaves them out. The two gauges
 * of one scrape (collected at once) share one read.
 */
export function createOutboxMetrics(registry: Registry, counts: () => Promise<Counts>): OutboxMetrics {
  let reading: Promise<Counts | undefined> | undefined;
  const shared = () => (reading ??= counts().catch(() => undefined).finally(() => (reading = undefined)));
  gauge(registry, 'schoolbridge_outbox_depth', 'Deliveries waiting or in flight, per connector', ['connector'], async function () {
    const all = await shared();
    this.reset();
    for (const c of all ?? []) this.set({ connector: c.connector }, c.depth);
  });
  gauge(registry, 'schoolbridge_outbox_dead', 'Dead deliveries (kept, retryable), per connector', ['connector'], async function () {
    const all = await shared();
    this.reset();
    for (const c of all ?? []) this.set({ connector: c.connector }, c.dead);
  });
  return {
    deliveries: counter(registry, 'schoolbridge_deliveries_total', 'Delivery attempts per record by connector and outcome (done, retry, dead)', ['connector', 'outcome']),
    duration: histogram(registry, 'schoolbridge_delivery_duration_seconds', 'Duration of one connector deliver call (one batch)', ['connector']),
    lag: histogram(registry, 'schoolbridge_delivery_lag_seconds', 'From enqueue to delivered', ['connector'], [0.01, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 14_400, 86_400]),
  };
}
