import type { Claimed, Settlement } from '../port.js';
import type { Db } from './db.js';

/**
 * Claims whose answer was lost: the claim committed, then the connection broke before its answer
 * came, so this replica holds leases no batch of it delivers. They would hold until they run out
 * (`delivery.leaseMs`, 10 minutes by default), and a part of the delivery log with them: a sixteenth
 * of the webhooks' keys. So each replica keeps what its answered claims leased and its settlements
 * have not ended yet, per connector; after a claim of a connector failed, its next claim first ends
 * this replica's other leases of that connector (`freeLost`), then claims as usual.
 *
 * Only while no other claim of the connector is in flight here: one could have committed leases
 * whose answer is on its way. The worker claims one batch at a time per connector, so in the daemon
 * that is always the case.
 */
export interface Held {
  /** Log parts (delivery log cursors) and their fences. */
  parts: { part: number; fence: number }[];
  /** Delivery rows by id and fence. */
  rows: { id: string; fence: number }[];
  /** Created ranges by stream, part and fence. */
  ranges: { stream: string; part: number; fence: number }[];
}

/** What names a lease: a delivery as claimed, or its settlement (both carry its place and fence). */
type Place = Pick<Settlement, 'id' | 'fence' | 'log' | 'range'>;

interface Lease {
  until: number;
  place: Place;
}

function keyOf(p: Place): string {
  if (p.log) return `log\u0000${p.log.part}\u0000${p.fence}`;
  if (p.range) return `range\u0000${p.range.stream}\u0000${p.range.part}\u0000${p.fence}`;
  return `row\u0000${p.id}\u0000${p.fence}`;
}

export class LostClaims {
  /** Per connector, the leases of answered claims not settled yet, by a key of lease and fence. */
  private readonly leases = new Map<string, Map<string, Lease>>();
  /** Connectors one of whose claims failed: it may have committed. */
  private readonly suspect = new Set<string>();
  private readonly claiming = new Map<string, number>();

  /**
   * A claim of the connector begins: what this replica holds of it when leases of it may be lost
   * and no other claim of it is in flight (the claim then frees the rest first), else undefined.
   */
  begin(connector: string, now: number): Held | undefined {
    const others = this.claiming.get(connector) ?? 0;
    this.claiming.set(connector, others + 1);
    if (others > 0 || !this.suspect.has(connector)) return undefined;
    const held: Held = { parts: [], rows: [], ranges: [] };
    const leases = this.leases.get(connector);
    for (const [key, lease] of leases ?? []) {
      // A lease that ran out is anyone's: nothing of it to keep.
      const { place } = lease;
      if (lease.until <= now) leases!.delete(key);
      else if (place.log) held.parts.push({ part: place.log.part, fence: place.fence });
      else if (place.range) {
        held.ranges.push({ stream: place.range.stream, part: place.range.part, fence: place.fence });
        // Its change may be a row by now, under the batch's lease (ranges.ts, materializeCreated).
        held.rows.push({ id: place.id, fence: place.fence });
      } else held.rows.push({ id: place.id, fence: place.fence });
    }
    return held;
  }

  /** The claim answered: what it leased is held until settled; lost leases, if any, were freed. */
  answered(connector: string, claimed: readonly Claimed[], freed: boolean): void {
    this.end(connector);
    if (freed) this.suspect.delete(connector);
    if (claimed.length === 0) return;
    let leases = this.leases.get(connector);
    if (!leases) this.leases.set(connector, (leases = new Map()));
    for (const { delivery } of claimed) leases.set(keyOf(delivery), { until: delivery.leaseUntil ?? 0, place: delivery });
  }

  /** The claim failed: it may have committed all the same. */
  failed(connector: string): void {
    this.end(connector);
    this.suspect.add(connector);
  }

  /** A settlement's answer came: its lease is ended, or was not this replica's any more. */
  settled(settlements: readonly Settlement[]): void {
    for (const s of settlements) this.leases.get(s.connector)?.delete(keyOf(s));
  }

  private end(connector: string): void {
    const n = (this.claiming.get(connector) ?? 1) - 1;
    if (n > 0) this.claiming.set(connector, n);
    else this.claiming.delete(connector);
  }
}

/**
 * Ends this replica's leases of the connector but those it holds (`held`): a lost claim's. Its log
 * cursors and ranges go back to where they were (their records are claimed again) and its rows are
 * due again. A late settlement of them is refused like any stale one (its lease is gone). Rows have
 * no index on their lease, so this reads the connector's pending rows: a rare repair, not a claim's
 * usual work.
 */
export async function freeLost(db: Db, owner: string, connector: string, held: Held): Promise<number> {
  const parts = await db.query(`UPDATE outbox_log_cursor c SET claimed_to = NULL, lease_owner = NULL, lease_until = NULL
    WHERE c.connector = $1 AND c.lease_owner = $2 AND c.claimed_to IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM unnest($3::int[], $4::bigint[]) AS h(part, fence) WHERE h.part = c.part AND h.fence = c.fence)`,
  [connector, owner, held.parts.map((h) => h.part), held.parts.map((h) => h.fence)]);
  const rows = await db.query(`UPDATE outbox_delivery d SET lease_owner = NULL, lease_until = NULL
    WHERE d.connector = $1 AND d.status = 'pending' AND d.lease_owner = $2
      AND NOT EXISTS (SELECT 1 FROM unnest($3::text[], $4::bigint[]) AS h(id, fence) WHERE h.id = d.id AND h.fence = d.fence)`,
  [connector, owner, held.rows.map((h) => h.id), held.rows.map((h) => h.fence)]);
  const ranges = await db.query(`UPDATE outbox_range r SET lease_owner = NULL, lease_until = NULL, claimed_to = NULL, claimed_to_text = NULL, claimed_count = NULL
    WHERE r.connector = $1 AND r.lease_owner = $2
      AND NOT EXISTS (SELECT 1 FROM unnest($3::text[], $4::int[], $5::bigint[]) AS h(stream, part, fence)
        WHERE h.stream = r.stream AND h.part = r.part AND h.fence = r.fence)`,
  [connector, owner, held.ranges.map((h) => h.stream), held.ranges.map((h) => h.part), held.ranges.map((h) => h.fence)]);
  return (parts.rowCount ?? 0) + (rows.rowCount ?? 0) + (ranges.rowCount ?? 0);
}
