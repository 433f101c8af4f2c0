import type { SnapshotStream } from './port.js';

/** The polled streams: each has a snapshot table of its own (and staging tables while a cycle runs). */
export const SNAPSHOT_STREAMS: readonly SnapshotStream[] = ['students', 'users'];

/** Table names are built from this fixed list only, never from input. */
export function snapshotTable(stream: SnapshotStream, part: 'rows' | 'next' | 'changes' = 'rows'): string {
  if (!SNAPSHOT_STREAMS.includes(stream)) throw new Error(`not a snapshot stream: ${String(stream)}`);
  return part === 'rows' ? `snapshot_${stream}` : `snapshot_${stream}_${part}`;
}

/** The delivery id of a record for a connector. */
export const deliveryId = (connector: string, recordId: string): string => `${connector}:${recordId}`;

/** Characters of change chain at the start of a fresh row's bytes (FreshRows). */
export const CHAIN_LENGTH = 12;

/**
 * A lease that ran out is taken over by another claim only this much later: a holder that is alive
 * abandons its attempt when the lease ends and records that (its attempt counted, its error kept)
 * before anyone else may start the delivery again.
 */
export const TAKEOVER_GRACE_MS = 1000;

/** How long a replica counts as live after its last heartbeat; its leases are reclaimed after. */
export const REPLICA_TTL_MS = 30_000;
