import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Store } from './port.js';
import type { StoreTimings } from './timings.js';
import { createPgStore } from './postgres/pg-store.js';
import { createSqliteStore } from './sqlite/sqlite-store.js';

export interface StoreConfig {
  driver: 'sqlite' | 'postgres';
  dir: string;
  url?: string | undefined;
  poolSize: number;
}

/** The store `store.driver` names (docs/store.md); the config schema has checked its keys. `timings` hears how fast it writes. */
export function openStore(config: StoreConfig, log: Logger, clock?: Clock, timings?: StoreTimings): Store {
  const options = { log, ...(clock ? { clock } : {}), ...(timings ? { timings } : {}) };
  if (config.driver === 'postgres') return createPgStore({ ...options, url: config.url!, poolSize: config.poolSize });
  return createSqliteStore({ ...options, dir: config.dir });
}
