import type Database from 'better-sqlite3';
import { mergeRetrying, type RetryingRow } from '../history-rules.js';
import type { DeliveryLookup, ListedDelivery, Retrying } from '../port.js';
import { leasesOf } from './leases.js';
import { lookupOwed } from './log.js';
import { rowDelivery, type DeliveryRow } from '../delivery-rows.js';
import { DELIVERY_COLUMNS, mergeListed } from './outbox.js';
import { sql } from './statements.js';

/**
 * What the operator console reads of the SQLite outbox: given deliveries with their state, and the
 * connectors retrying. Every lookup goes by an index the queue has anyway: the delivery id, and
 * (connector, order key) through the partial indexes of heads and of deliveries waiting behind them.
 */
type Db = Database.Database;
const COLUMNS = DELIVERY_COLUMNS.join(', ');

export function lookup(db: Db, query: DeliveryLookup, now: number): ListedDelivery[] {
  const rows = new Map<number, DeliveryRow>();
  const add = (found: DeliveryRow[]) => found.forEach((row) => rows.set(row.seq, row));
  if (query.ids?.length) add(sql(db, `SELECT ${COLUMNS} FROM outbox_delivery WHERE id IN (SELECT value FROM json_each(?))`).all(JSON.stringify(query.ids)) as DeliveryRow[]);
  const heads = sql(db, `SELECT ${COLUMNS} FROM outbox_delivery WHERE connector = ? AND order_key = ? AND status IN ('pending', 'active', 'dead')`);
  const waiting = sql(db, `SELECT ${COLUMNS} FROM outbox_delivery WHERE connector = ? AND order_key = ? AND status = 'blocked' ORDER BY seq`);
  for (const key of query.keys ?? []) {
    const head = heads.all(key.connector, key.orderKey) as DeliveryRow[];
    add(head);
    add((waiting.all(key.connector, key.orderKey) as DeliveryRow[]));
  }
  const heldBy = new Map<string, string>();
  for (const row of rows.values()) if (row.status !== 'blocked') heldBy.set(`${row.connector}\u0000${row.order_key}`, row.id);
  const leases = leasesOf(db);
  const listed = [...rows.values()].sort((a, b) => a.seq - b.seq).map((row): ListedDelivery => {
    const delivery = leases.overlay(rowDelivery(row), now);
    if (delivery.status !== 'blocked') return delivery;
    const head = heldBy.get(`${row.connector}\u0000${row.order_key}`) ?? headOf(db, row);
    return { ...delivery, status: 'pending' as const, ...(head === undefined ? {} : { waitingFor: head }) };
  });
  return mergeListed(listed, lookupOwed(db, query.ids ?? [], query.keys ?? [], now));
}

function headOf(db: Db, row: DeliveryRow): string | undefined {
  return sql(db, `SELECT id FROM outbox_delivery WHERE connector = ? AND order_key = ? AND status IN ('pending', 'active', 'dead')`).pluck()
    .get(row.connector, row.order_key) as string | undefined;
}

/**
 * Deliveries that failed and wait for another try: pending with an error kept. A scan of the
 * pending deliveries, as the queue's counts are.
 */
export function retrying(db: Db): Retrying[] {
  const rows = sql(db, `SELECT connector, count(*) AS n, min(run_at) AS next_run_at, max(last_attempt_at) AS last_attempt_at,
      (SELECT x.last_error FROM outbox_delivery x WHERE x.connector = d.connector AND x.status = 'pending' AND x.last_error IS NOT NULL
        ORDER BY x.last_attempt_at DESC LIMIT 1) AS last_error
    FROM outbox_delivery d WHERE status = 'pending' AND last_error IS NOT NULL GROUP BY connector`).all() as RetryingRow[];
  const ranges = sql(db, `SELECT connector, remaining AS n, run_at AS next_run_at, last_attempt_at, last_error FROM outbox_range
    WHERE last_error IS NOT NULL`).all() as RetryingRow[];
  return mergeRetrying([...rows, ...ranges]);
}
