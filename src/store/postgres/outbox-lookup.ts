import { mergeRetrying, type RetryingRow } from '../history-rules.js';
import type { DeliveryLookup, ListedDelivery, Retrying } from '../port.js';
import type { Db } from './db.js';
import { lookupOwed, merged } from './log.js';
import type { DeliveryRow } from '../delivery-rows.js';
import { toDelivery } from './outbox.js';

/**
 * What the operator console reads of the PostgreSQL outbox (sqlite/outbox-lookup.ts says what): by
 * delivery id, and by (connector, order key) through the partial indexes of heads and of waiting ones.
 */
export async function lookup(db: Db, query: DeliveryLookup, now: number): Promise<ListedDelivery[]> {
  const keys = query.keys ?? [];
  const { rows } = await db.query<DeliveryRow & { waiting_for: string | null }>(`SELECT d.*, (SELECT h.id FROM outbox_delivery h WHERE d.status = 'blocked'
      AND h.connector = d.connector AND h.order_key = d.order_key AND h.status IN ('pending', 'dead')) AS waiting_for
    FROM (
      SELECT * FROM outbox_delivery WHERE id = ANY($1::text[])
      UNION SELECT x.* FROM unnest($2::text[], $3::text[]) AS k(connector, order_key) CROSS JOIN LATERAL (
        SELECT * FROM outbox_delivery h WHERE h.connector = k.connector AND h.order_key = k.order_key AND h.status IN ('pending', 'dead')
        UNION ALL SELECT * FROM outbox_delivery w WHERE w.connector = k.connector AND w.order_key = k.order_key AND w.status = 'blocked') x
    ) d ORDER BY d.seq`, [query.ids ?? [], keys.map((k) => k.connector), keys.map((k) => k.orderKey)]);
  const listed = rows.map((row): ListedDelivery => {
    const delivery = toDelivery(row, now);
    if (delivery.status !== 'blocked') return delivery;
    return { ...delivery, status: 'pending', ...(row.waiting_for === null ? {} : { waitingFor: row.waiting_for }) };
  });
  return merged(listed, await lookupOwed(db, query.ids ?? [], keys, now));
}

/** Deliveries that failed and wait for another try (a scan of the pending ones, as the counts are). */
export async function retrying(db: Db): Promise<Retrying[]> {
  const { rows } = await db.query<RetryingRow>(`SELECT connector, count(*)::bigint AS n, min(run_at) AS next_run_at, max(last_attempt_at) AS last_attempt_at,
      (array_agg(last_error ORDER BY last_attempt_at DESC NULLS LAST))[1] AS last_error
    FROM outbox_delivery WHERE status = 'pending' AND last_error IS NOT NULL GROUP BY connector
    UNION ALL SELECT connector, remaining, run_at, last_attempt_at, last_error FROM outbox_range WHERE last_error IS NOT NULL`);
  return mergeRetrying(rows);
}
