export type * from './port.js';
export { openStore, type StoreConfig } from './open.js';
export { createStoreMetrics } from './store-metrics.js';
export type { StoreTimings } from './timings.js';
export { holderName, liveHolder, type LockInfo } from './sqlite/lock.js';
export { CHAIN_LENGTH, SNAPSHOT_STREAMS, REPLICA_TTL_MS, deliveryId, ofDeliveryId } from './tables.js';
export { HOUR_MS, hourOf } from './history-port.js';
