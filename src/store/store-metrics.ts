import type { Registry } from 'prom-client';
import { histogram } from '../metrics.js';
import type { StoreTimings } from './timings.js';

/** Sub-millisecond to seconds: a sync takes about a millisecond on a good disk and seconds on a failing one. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** The store's timings as histograms, labelled with its engine. */
export function createStoreMetrics(registry: Registry, engine: string): StoreTimings {
  const transactions = histogram(registry, 'schoolbridge_store_transaction_seconds', 'Duration of a store transaction, from its start to its commit: every one of the database thread (sqlite), each that wrote (postgres)', ['engine'], BUCKETS);
  const syncs = histogram(registry, 'schoolbridge_store_sync_seconds', 'Duration of making commits durable: the WAL file\'s sync (sqlite), a durable COMMIT (postgres)', ['engine'], BUCKETS);
  return {
    transaction: (seconds) => transactions.observe({ engine }, seconds),
    sync: (seconds) => syncs.observe({ engine }, seconds),
  };
}
