import type { Delivery, Key } from '../port.js';

/**
 * Leases of the embedded store, kept in the database thread's memory, not in the database. One process
 * holds a SQLite store (lock.ts), so a lease only needs to outlive a delivery, never a crash: after a
 * crash every delivery is simply pending again, which is what a reclaimed lease would be. A claim
 * then costs a read instead of a write per delivery. What the port promises still holds: a fence per
 * claim, a settle refused after the lease ran out or moved on, a stopped replica's leases returned.
 */
export interface Lease {
  fence: number;
  owner: string;
  until: number;
  /**
   * A batch of a range (ranges.ts) or of the delivery log (log.ts): the last key or number it
   * covers, how many rows, and for the log each record's enqueue time by its number.
   */
  batch?: { to: Key; count: number; enqueuedAt?: ReadonlyMap<number, number> };
  /** The delivery row's `seq`, by which a claim skips deliveries in flight without reading them. */
  seq?: number;
}

export class LeaseTable {
  private readonly leases = new Map<string, Lease>();
  /**
   * The leases taken with a `seq`, by it, kept in step with `leases`. A delivery row is deleted only
   * by the settlement that ends its lease, so a `seq` SQLite gives again to a new row is never
   * found held.
   */
  private readonly bySeq = new Map<number, Lease>();
  private fence = 0;
  /**
   * What each change since `begin()` replaced, so that a transaction rolled back takes its leases
   * back with it: a claim that was not committed must not leave its deliveries leased to nobody.
   */
  private undo: { id: string; was: Lease | undefined }[] | undefined;

  /** Starts recording changes (a transaction began). */
  begin(): void {
    this.undo = [];
  }

  /** A point to go back to (`rollbackTo`) within the transaction. */
  mark(): number {
    return this.undo?.length ?? 0;
  }

  /** Undoes the changes made since `mark` (the transaction's start by default). */
  rollbackTo(mark = 0): void {
    const undo = this.undo;
    if (!undo) return;
    while (undo.length > mark) {
      const { id, was } = undo.pop()!;
      this.put(id, was);
    }
  }

  /** Stops recording: the changes stand (the transaction committed). */
  commit(): void {
    this.undo = undefined;
  }

  private record(id: string): void {
    this.undo?.push({ id, was: this.leases.get(id) });
  }

  /** Sets or removes the lease of `id`, in both maps. */
  private put(id: string, lease: Lease | undefined): void {
    const was = this.leases.get(id);
    if (was?.seq !== undefined) this.bySeq.delete(was.seq);
    if (!lease) {
      this.leases.delete(id);
      return;
    }
    this.leases.set(id, lease);
    if (lease.seq !== undefined) this.bySeq.set(lease.seq, lease);
  }

  /** Whether the delivery is leased now (a lease past its time is not). */
  held(id: string, now: number): boolean {
    const lease = this.leases.get(id);
    return lease !== undefined && lease.until > now;
  }

  /** The lease of `id` if it holds at `now`. */
  holding(id: string, now: number): Lease | undefined {
    const lease = this.leases.get(id);
    return lease !== undefined && lease.until > now ? lease : undefined;
  }

  /** `held` for a delivery row known by its `seq` (one claimed with it). */
  heldSeq(seq: number, now: number): boolean {
    const lease = this.bySeq.get(seq);
    return lease !== undefined && lease.until > now;
  }

  /** The `seq` of every delivery row leased now. */
  heldSeqs(now: number): number[] {
    const seqs: number[] = [];
    for (const [seq, lease] of this.bySeq) if (lease.until > now) seqs.push(seq);
    return seqs;
  }

  take(id: string, owner: string, until: number, more: Pick<Lease, 'batch' | 'seq'> = {}): Lease {
    const lease: Lease = { fence: (this.fence += 1), owner, until, ...more };
    this.record(id);
    this.put(id, lease);
    return lease;
  }

  /** Ends the lease if it is still the one claimed with `fence` by `owner` and returns it; undefined otherwise. */
  end(id: string, fence: number, owner: string): Lease | undefined {
    const lease = this.leases.get(id);
    if (!lease || lease.fence !== fence || lease.owner !== owner) return undefined;
    this.record(id);
    this.put(id, undefined);
    return lease;
  }

  /** The lease of `id` as taken, whether or not its time ran out. */
  lease(id: string): Lease | undefined {
    return this.leases.get(id);
  }

  /**
   * Gives the delivery row `id` (of `seq`) the owner, time and fence of `from`: the row stands for a
   * change of a batch in flight under `from`, so the batch's settlement of it settles the row.
   */
  share(id: string, seq: number, from: Lease): void {
    this.record(id);
    this.put(id, { fence: from.fence, owner: from.owner, until: from.until, seq });
  }

  /** Ends a lease whatever its fence: a settle under it is refused. */
  drop(id: string): void {
    this.record(id);
    this.put(id, undefined);
  }

  /** Ends leases past their time or held by owners no longer live; returns how many. */
  reclaim(now: number, live: (owner: string) => boolean): number {
    let reclaimed = 0;
    for (const [id, lease] of this.leases) {
      if (lease.until > now && live(lease.owner)) continue;
      this.record(id);
      this.put(id, undefined);
      reclaimed += 1;
    }
    return reclaimed;
  }

  /** A stored delivery as it stands with its lease, if any: in flight, its attempt counted. */
  overlay(delivery: Delivery, now: number): Delivery {
    const lease = this.leases.get(delivery.id);
    if (!lease || lease.until <= now) return delivery;
    return { ...delivery, status: 'active', attempts: delivery.attempts + 1, fence: lease.fence, leaseUntil: lease.until, leaseOwner: lease.owner };
  }
}

const tables = new WeakMap<object, LeaseTable>();

/** The lease table of a connection. */
export function leasesOf(db: object): LeaseTable {
  let table = tables.get(db);
  if (!table) tables.set(db, (table = new LeaseTable()));
  return table;
}
