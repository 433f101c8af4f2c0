import type { Stream } from '../records.js';
import type { Delivery, DeliveryStatus } from './port.js';

/** An `outbox_delivery` row as both engines read it back (sqlite/outbox.ts, postgres/outbox.ts). */
export interface DeliveryRow {
  seq: number;
  id: string;
  connector: string;
  record_id: string;
  stream: Stream;
  order_key: string;
  status: DeliveryStatus;
  enqueued_at: number;
  run_at: number;
  attempts: number;
  last_error: string | null;
  last_attempt_at: number | null;
  lease_owner: string | null;
  lease_until: number | null;
  fence: number;
}

/** The delivery a row holds; `status` as the engine tells it (PostgreSQL says `active` for a row whose lease runs). */
export function rowDelivery(row: DeliveryRow, status: DeliveryStatus = row.status): Delivery {
  return {
    id: row.id, connector: row.connector, recordId: row.record_id, stream: row.stream, orderKey: row.order_key,
    seq: row.seq, status, enqueuedAt: row.enqueued_at, runAt: row.run_at, attempts: row.attempts, fence: row.fence,
    ...(row.last_error === null ? {} : { lastError: row.last_error }),
    ...(row.last_attempt_at === null ? {} : { lastAttemptAt: row.last_attempt_at }),
    ...(row.lease_until === null ? {} : { leaseUntil: row.lease_until }),
    ...(row.lease_owner === null ? {} : { leaseOwner: row.lease_owner }),
  };
}
