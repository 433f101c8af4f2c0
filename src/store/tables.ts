import { POLLED_STREAM_NAMES, polledStream, type KeyType } from '../streams/index.js';
import type { SnapshotStream } from './port.js';

export { CHAIN_LENGTH } from '../records.js';

/**
 * The polled streams (src/streams/): each has a snapshot table of its own (and staging tables while
 * a cycle runs), made by a migration of its own (docs/store.md).
 */
export const SNAPSHOT_STREAMS: readonly SnapshotStream[] = POLLED_STREAM_NAMES;

/** The type of a stream's keys: its snapshot tables' key column is of it. */
export const keyTypeOf = (stream: SnapshotStream): KeyType => polledStream(stream).key.type;

/** Table names are built from the registry's names only, never from input. */
export function snapshotTable(stream: SnapshotStream, part: 'rows' | 'next' | 'changes' = 'rows'): string {
  if (!SNAPSHOT_STREAMS.includes(stream)) throw new Error(`not a snapshot stream: ${String(stream)}`);
  return part === 'rows' ? `snapshot_${stream}` : `snapshot_${stream}_${part}`;
}

/** The delivery id of a record for a connector. */
export const deliveryId = (connector: string, recordId: string): string => `${connector}:${recordId}`;

/**
 * The connector and record a delivery id names: a connector's name holds no ":" (its config schema),
 * so the id's first ":" ends it. Undefined for an id no delivery can have.
 */
export function ofDeliveryId(id: string): { connector: string; recordId: string } | undefined {
  const colon = id.indexOf(':');
  return colon > 0 ? { connector: id.slice(0, colon), recordId: id.slice(colon + 1) } : undefined;
}

/**
 * A lease that ran out is taken over by another claim only this much later: a holder that is alive
 * abandons its attempt when the lease ends and records that (its attempt counted, its error kept)
 * before anyone else may start the delivery again.
 */
export const TAKEOVER_GRACE_MS = 1000;

/** How long a replica counts as live after its last heartbeat; its leases are reclaimed after. */
export const REPLICA_TTL_MS = 30_000;

/**
 * How long after its last heartbeat a replica still starts a delivery (Store.leasesStand): a third
 * of REPLICA_TTL_MS short of it, for the other replicas' clocks and a request's way out.
 */
export const OWN_LEASES_MS = 20_000;
