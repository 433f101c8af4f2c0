import type pg from 'pg';
import { BridgeError } from '../../errors.js';
import type { SnapshotStore, SnapshotStream } from '../port.js';
import type { PgCalls } from './calls.js';
import * as ranges from './ranges.js';
import * as snapshot from './snapshot.js';
import { createStagingLocks, type StagingLocks } from './staging-lock.js';

/**
 * The snapshot part of the port on PostgreSQL. A cycle's staging is this process's while it runs:
 * `begin` takes the stream's staging lock (staging-lock.ts) and a new fence (snapshot.ts), every
 * later staging and applying call names that fence, and the lock goes once the cycle applied or
 * discarded what it staged.
 */
export interface PgSnapshot {
  snapshot: SnapshotStore;
  staging: StagingLocks;
}

export function createPgSnapshot(calls: PgCalls, pool: () => pg.Pool | undefined): PgSnapshot {
  const { read, write, statement } = calls;
  const staging = createStagingLocks(pool);
  /** The fence each stream's staging took at `begin`: what this process's cycle may apply under. */
  const fences = new Map<SnapshotStream, number>();
  const fenceOf = (stream: SnapshotStream): number => {
    const fence = fences.get(stream);
    if (fence === undefined) throw new BridgeError('poll.not_staging', `no poll cycle of this process is staging ${stream}`);
    return fence;
  };
  const finish = async (stream: SnapshotStream) => {
    fences.delete(stream);
    await staging.release(stream);
  };

  const methods: SnapshotStore = {
    size: (stream) => read((db) => snapshot.size(db, stream)),
    version: (stream) => read((db) => snapshot.version(db, stream)),
    index: (stream) => read((db) => snapshot.index(db, stream)),
    rows: (stream, keys) => read((db) => snapshot.rows(db, stream, keys)),
    gone: (stream, keys) => read((db) => snapshot.gone(db, stream, keys)),
    scan: (stream, after, limit) => read((db) => snapshot.scan(db, stream, after, limit)),
    reserve: (streams) => staging.takeAll(streams),
    async begin(stream, kind) {
      await staging.take(stream);
      try {
        fences.set(stream, await write((db) => snapshot.begin(db, stream, kind)));
      } catch (error) {
        await staging.release(stream);
        throw error;
      }
    },
    stageFresh: (stream, rows) => write((db) => snapshot.stageFresh(db, stream, fenceOf(stream), rows)),
    stageChanges: (stream, rows) => write((db) => snapshot.stageChanges(db, stream, fenceOf(stream), rows)),
    // Only what this process staged: the staging tables of another process's cycle are its own.
    async discard(stream) {
      if (!staging.holds(stream)) return;
      try {
        // Reserved but not begun: nothing was staged.
        const fence = fences.get(stream);
        if (fence !== undefined) await write((db) => snapshot.discard(db, stream, fence));
      } finally {
        await finish(stream);
      }
    },
    async applyFresh(stream, apply) {
      const fence = fenceOf(stream);
      // The staged table is this cycle's while this process holds the stream's staging lock; one that
      // lost it finds the table another's or gone, and the apply refuses it as fenced.
      await statement((db) => snapshot.vacuumStaged(db, stream));
      await write((db) => snapshot.applyFresh(db, stream, fence, apply.state, apply.created));
      await finish(stream);
    },
    async applyChanges(stream, apply) {
      const result = await write((db) => snapshot.applyChanges(db, stream, fenceOf(stream), apply.limit, apply.connectors, apply.state, apply.now));
      if (result.done) await finish(stream);
      return result;
    },
    materializeCreated: (stream, limit, now) => write((db) => ranges.materializeCreated(db, stream, limit, now)),
    createdPending: (stream) => read((db) => ranges.createdPending(db, stream)),
  };
  return { snapshot: methods, staging };
}
