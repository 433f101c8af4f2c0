import type { Op } from '../store/index.js';
import type { DeliveredLog } from './delivered-log.js';
import { DELIVERED, ENTRIES, RECORDS, type OutboxEntry } from './entry.js';
import type { QueueIndex } from './queue-index.js';
import { reclaim } from './transitions.js';

/**
 * Housekeeping decisions of the outbox, as store ops. Start-up: nothing else holds a lease when we
 * start (we hold the store's lock), so every active entry is pending again; records no entry needs
 * (left by a crash between two commits) go. The sweep: leases that expired on entries this process
 * is not delivering, and delivered pairs older than the retention.
 */
export interface Housekeeping {
  entries: Iterable<[string, OutboxEntry]>;
  delivered: DeliveredLog;
  now: number;
  retentionMs: number;
}

export function startupOps(h: Housekeeping & { records: Iterable<[string, unknown]>; index: QueueIndex }): Op[] {
  const ops: Op[] = [];
  for (const [, entry] of h.entries) if (entry.status === 'active') ops.push(putEntry(reclaim(entry, h.now)));
  for (const [key] of h.records) if (h.index.references(key) === 0) ops.push({ op: 'del', c: RECORDS, k: key });
  return [...ops, ...expiredDelivered(h)];
}

export function sweepOps(h: Housekeeping & { inFlight: (id: string) => boolean }): Op[] {
  const ops: Op[] = [];
  for (const [id, entry] of h.entries) {
    if (entry.status === 'active' && (entry.leaseUntil ?? 0) <= h.now && !h.inFlight(id)) ops.push(putEntry(reclaim(entry, h.now)));
  }
  return [...ops, ...expiredDelivered(h)];
}

function expiredDelivered(h: Housekeeping): Op[] {
  return h.delivered.expire(h.now - h.retentionMs).map((id) => ({ op: 'del', c: DELIVERED, k: id }));
}

export function putEntry(entry: OutboxEntry): Op {
  return { op: 'put', c: ENTRIES, k: entry.id, v: entry };
}
