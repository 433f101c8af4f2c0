import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import { systemClock, type Clock } from '../../clock.js';
import { makeDir } from '../../files/make-dir.js';
import { createHealth } from '../health.js';
import { createLocalRoles } from '../local-roles.js';
import { startHeartbeat } from '../heartbeat.js';
import { refuseOldFormat } from '../old-format.js';
import type { Store } from '../port.js';
import type { StoreTimings } from '../timings.js';
import { acquireLock, type HeldLock } from './lock.js';
import type { Self } from './operations.js';
import { sqlitePortMethods } from './port-methods.js';
import { createThreadClient } from './thread-client.js';
import { outageRank } from './transaction.js';

export interface SqliteStoreOptions {
  dir: string;
  log: Logger;
  clock?: Clock;
  /** Heartbeat interval (default 5 s). */
  heartbeatMs?: number;
  /** WAL frames (of 4 KiB) past which the WAL starts over (db-thread.ts; default 8192): tests make it small. */
  walRestartFrames?: number;
  /** Told how long transactions and WAL syncs take (timings.ts). */
  timings?: StoreTimings;
}

export const DATABASE_FILE = 'schoolbridge.db';

/**
 * The embedded store (docs/store.md): one SQLite database under `store.dir`, held by one process
 * (lock.ts), served by a database thread of its own (thread-client.ts, db-thread.ts) so that neither
 * a commit's fsync nor a poll's bulk writes hold the daemon's event loop. This file is the store's
 * life: the lock, the thread, the heartbeat; the port's methods are in port-methods.ts.
 */
export function createSqliteStore(options: SqliteStoreOptions): Store {
  const { dir, log } = options;
  const clock = options.clock ?? systemClock;
  const health = createHealth({ rank: outageRank });
  const self: Self = { id: randomUUID(), host: hostname(), pid: process.pid, startedAt: clock.now() };
  let lock: HeldLock | undefined;
  let heartbeat: { stop(): Promise<void> } | undefined;
  let url: string | undefined;
  let state: 'new' | 'open' | 'closed' = 'new';
  const thread = createThreadClient({ log, clock, health, isOpen: () => state === 'open', timings: options.timings });
  const { call } = thread;

  const store: Store = {
    name: 'store',
    engine: 'sqlite',
    // One process holds the database (lock.ts): it has every role, and nobody else changes anything.
    shared: false,
    replicaId: self.id,
    roles: createLocalRoles(self.id),
    watch: () => () => {},
    ...sqlitePortMethods(call, clock, () => url),
    // One process per database file: no other replica can take its leases.
    leasesStand: () => true,
    health: () => (state === 'open' ? health.current() : { ok: false, reason: 'store not open', since: self.startedAt }),
    onHealth: (listener) => health.on(listener),
    async advertise(at, sandboxUrl) {
      url = at;
      await lock?.update({ adminUrl: at, ...(sandboxUrl ? { sandboxUrl } : {}) });
      await store.replicas.beat(clock.now(), at);
    },
    async start() {
      if (state !== 'new') return;
      await makeDir(dir);
      await refuseOldFormat(dir);
      lock = await acquireLock(dir);
      try {
        await thread.open(path.join(dir, DATABASE_FILE), self, options.walRestartFrames);
        state = 'open';
        // The lock is ours, so every other replica row is a process that died holding it: its
        // leases are free now, not after its heartbeat runs out.
        await call('takeOver');
        await store.replicas.beat(clock.now());
        await store.outbox.sweep(clock.now());
      } catch (error) {
        state = 'closed';
        await thread.terminate();
        lock.release();
        throw error;
      }
      heartbeat = startHeartbeat({ beat: () => store.replicas.beat(clock.now()), health, clock, log, intervalMs: options.heartbeatMs ?? 5000 });
      log.info({ dir, engine: 'sqlite' }, 'store opened');
    },
    async stop() {
      if (state !== 'open') return;
      await heartbeat?.stop();
      await call('leave').catch(() => {});
      state = 'closed';
      await thread.close();
      lock?.release();
    },
  };
  return store;
}
