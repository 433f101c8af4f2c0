import type { PolledStreamName as PolledStream } from '../streams/index.js';

/**
 * The mass-delete guard: a cycle that would delete more than `maxDeleteRatio` of a stream,
 * or that receives an empty list where the snapshot is not empty, is far more likely an upstream
 * fault (a half-restored database, a filter bug) than a school that lost its students. Such a cycle
 * aborts before anything is committed, so the snapshot keeps the last good state.
 */
export type AbortReason = 'empty_list' | 'mass_delete' | 'duplicate_id';

export interface GuardInput {
  stream: PolledStream;
  /** Records in the snapshot before the cycle. */
  snapshotSize: number;
  /** Records in the list just fetched. */
  fetched: number;
  /** Snapshot keys missing from that list. */
  deletes: number;
  maxDeleteRatio: number;
}

export interface GuardVerdict {
  reason: AbortReason;
  stream: PolledStream;
  message: string;
}

export function checkDeleteGuard(input: GuardInput): GuardVerdict | undefined {
  const { stream, snapshotSize, fetched, deletes, maxDeleteRatio } = input;
  if (fetched === 0 && snapshotSize > 0) {
    return { reason: 'empty_list', stream, message: `upstream returned an empty ${stream} list while the snapshot holds ${snapshotSize}` };
  }
  if (snapshotSize > 0 && deletes / snapshotSize > maxDeleteRatio) {
    const share = ((deletes / snapshotSize) * 100).toFixed(1);
    return {
      reason: 'mass_delete',
      stream,
      message: `${deletes} of ${snapshotSize} ${stream} (${share}%) would be deleted, more than poll.maxDeleteRatio ${maxDeleteRatio}`,
    };
  }
  return undefined;
}
