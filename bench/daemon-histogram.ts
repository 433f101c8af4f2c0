import type { Registry } from 'prom-client';

export interface Bucket {
  /** Upper bound in seconds (Infinity for +Inf). */
  le: number;
  /** Observations at or below it (cumulative, as Prometheus counts them). */
  count: number;
}

/**
 * The cumulative buckets of one of the daemon's histograms, read from its registry: the benches'
 * view of what the daemon measured itself (acknowledgement times, WAL fsyncs). Series whose labels
 * `keep` accepts are summed (all of them by default).
 */
export async function histogramBuckets(metrics: Registry, name: string, keep: (labels: Record<string, string | number>) => boolean = () => true): Promise<Bucket[]> {
  const metric = metrics.getSingleMetric(name);
  const values = (metric ? (await metric.get()).values : []) as { metricName?: string; labels: Record<string, string | number>; value: number }[];
  const counts = new Map<number, number>();
  for (const v of values) {
    if (!v.metricName?.endsWith('_bucket') || !keep(v.labels)) continue;
    const le = v.labels.le === '+Inf' ? Infinity : Number(v.labels.le);
    counts.set(le, (counts.get(le) ?? 0) + v.value);
  }
  return [...counts].map(([le, count]) => ({ le, count })).sort((a, b) => a.le - b.le);
}

/** Observations above `seconds` (a bucket bound). */
export function countAbove(buckets: readonly Bucket[], seconds: number): number {
  return (buckets.at(-1)?.count ?? 0) - (buckets.find((b) => b.le === seconds)?.count ?? 0);
}

/** The upper bound of the bucket holding quantile `q`. */
export function bucketQuantile(buckets: readonly Bucket[], q: number): string {
  const total = buckets.at(-1)?.count ?? 0;
  const le = buckets.find((b) => b.count >= q * total)?.le;
  return le === undefined ? '?' : le === Infinity ? '+Inf' : String(le);
}
