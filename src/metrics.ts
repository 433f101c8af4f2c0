import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { PAGE_READ_MS } from './page-read.js';

/**
 * The project's Prometheus registry. Components create their metrics on the registry they are given
 * through these idempotent helpers, so two components (or two tests) asking for the same metric
 * share it instead of failing on a duplicate registration.
 */
export function createMetricsRegistry(options: { defaultMetrics?: boolean } = {}): Registry {
  const registry = new Registry();
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry, prefix: 'schoolbridge_' });
  return registry;
}

export function counter<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Counter<L>;
  return new Counter({ name, help, labelNames, registers: [registry] });
}

export function gauge<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[] = [],
  collect?: (this: Gauge<L>) => void | Promise<void>,
): Gauge<L> {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Gauge<L>;
  return new Gauge({ name, help, labelNames, registers: [registry], ...(collect ? { collect: bounded(collect) } : {}) });
}

/**
 * A gauge read when scraped (from the store, mostly) waits at most PAGE_READ_MS: a store that answers
 * nothing would otherwise hold the whole scrape until the scraper gave up on every metric. Past it
 * the scrape goes without the gauge's series, as when its read fails; `schoolbridge_check_ok` says why.
 */
function bounded<L extends string>(collect: (this: Gauge<L>) => void | Promise<void>): (this: Gauge<L>) => Promise<void> {
  return async function (this: Gauge<L>) {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), PAGE_READ_MS);
    });
    try {
      if ((await Promise.race([Promise.resolve(collect.call(this)), late])) === 'late') this.reset();
    } finally {
      clearTimeout(timer);
    }
  };
}

export function histogram<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[] = [],
  buckets: number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
): Histogram<L> {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Histogram<L>;
  return new Histogram({ name, help, labelNames, buckets, registers: [registry] });
}
