import type pg from 'pg';
import { BridgeError } from '../../errors.js';
import type { SnapshotStream } from '../port.js';

/**
 * One poll cycle stages a stream at a time on a database. `take` holds a session advisory lock on a
 * connection of its own from `begin` until the cycle applies or discards what it staged, so a second
 * process's cycle (a `sync` from the CLI beside the daemon) is refused with `poll.busy` instead of
 * dropping the staging table the first one is filling. The lock goes with its connection when the
 * holding process dies. A process that holds it may begin again (a list read retried). A cycle takes
 * all of its streams first (`takeAll`), in the order of their names: two cycles started at once then
 * meet at the first stream, and the one refused holds nothing the other needs.
 */
export interface StagingLocks {
  take(stream: SnapshotStream): Promise<void>;
  /** Takes each of `streams` in one order (the same in every process), all or none. */
  takeAll(streams: readonly SnapshotStream[]): Promise<void>;
  holds(stream: SnapshotStream): boolean;
  release(stream: SnapshotStream): Promise<void>;
  releaseAll(): Promise<void>;
}

const LOCK = `hashtext('schoolbridge.stage'), hashtext($1)`;

export function createStagingLocks(pool: () => pg.Pool | undefined): StagingLocks {
  const held = new Map<SnapshotStream, pg.PoolClient>();
  const locks: StagingLocks = {
    async take(stream) {
      if (held.has(stream)) return;
      const current = pool();
      if (!current) throw new BridgeError('store.closed', 'the store is not open', { retryable: true });
      const client = await current.connect();
      let taken: boolean;
      try {
        const { rows } = await client.query<{ taken: boolean }>(`SELECT pg_try_advisory_lock(${LOCK}) AS taken`, [stream]);
        taken = rows[0]?.taken === true;
      } catch (error) {
        client.release(error as Error);
        throw error;
      }
      if (!taken) {
        client.release();
        throw new BridgeError('poll.busy', `another process is running a poll cycle on this database (stream ${stream}); try again when it is done`, { retryable: true });
      }
      held.set(stream, client);
    },
    async takeAll(streams) {
      const taken: SnapshotStream[] = [];
      try {
        for (const stream of [...new Set(streams)].sort()) {
          if (held.has(stream)) continue;
          await locks.take(stream);
          taken.push(stream);
        }
      } catch (error) {
        for (const stream of taken) await locks.release(stream);
        throw error;
      }
    },
    holds: (stream) => held.has(stream),
    async release(stream) {
      const client = held.get(stream);
      if (!client) return;
      held.delete(stream);
      try {
        await client.query(`SELECT pg_advisory_unlock(${LOCK})`, [stream]);
        client.release();
      } catch (error) {
        // The connection is dropped, and its session's locks with it.
        client.release(error as Error);
      }
    },
    async releaseAll() {
      for (const stream of [...held.keys()]) await locks.release(stream);
    },
  };
  return locks;
}
