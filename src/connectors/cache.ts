/**
 * Lets a connector's `ctx.cache` go: it is empty at once, and each value with a `close()` method
 * (a file kept open between deliveries) is closed. The outbox does this as it stops and when an
 * exclusive connector's cache starts afresh for a new term, so nothing a cache held stays open
 * until the garbage collector finds it.
 */
export async function releaseCache(cache: Map<string, unknown>): Promise<void> {
  const values = [...cache.values()];
  cache.clear();
  await Promise.allSettled(values.filter(closeable).map((value) => value.close()));
}

const closeable = (value: unknown): value is { close(): unknown } =>
  typeof value === 'object' && value !== null && typeof (value as { close?: unknown }).close === 'function';
