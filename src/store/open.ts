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

export interface OpenOptions {
  clock?: Clock | undefined;
  /** Hears how fast the store writes. */
  timings?: StoreTimings | undefined;
  /**
   * What the process is (default `daemon`): a daemon's store holds what makes its calls fast from
   * start (PostgreSQL: every connection of the pool); a command that runs once opens what it needs.
   */
  mode?: 'daemon' | 'oneshot';
}

/** The store `store.driver` names (docs/store.md); the config schema has checked its keys. */
export function openStore(config: StoreConfig, log: Logger, { clock, timings, mode = 'daemon' }: OpenOptions = {}): Store {
  const options = { log, ...(clock ? { clock } : {}), ...(timings ? { timings } : {}) };
  if (config.driver === 'postgres') return createPgStore({ ...options, url: config.url!, poolSize: config.poolSize, fillAtStart: mode === 'daemon' });
  return createSqliteStore({ ...options, dir: config.dir });
}
