import { ShardedMap } from '../sharded-map.js';
import type { OutboxEntry } from './entry.js';

/**
 * The outbox's in-memory view of its queue, rebuilt from the store at start-up: per connector, the
 * entry ids of each order key in `seq` order (the first is the head, the only one allowed to run),
 * and how many entries still reference each stored record (the record is dropped with its last one).
 * Entry values themselves are read from the store, the one source of truth.
 *
 * The per-entry maps are ShardedMaps: a first poll cycle adds 300,000 entries, and growing three
 * Maps past 262,144 entries in one commit chunk held the event loop 143-152 ms (sharded-map.ts).
 */
export class QueueIndex {
  private readonly queues = new Map<string, ShardedMap<string[]>>();
  private readonly refs = new ShardedMap<number>();
  private readonly ids = new ShardedMap<{ connector: string; order: string; key: string; released?: boolean; dead?: boolean }>();
  /**
   * Per connector, its entries not released yet, and how many of them are dead: kept as entries come
   * and go, because counting them by walking the queue took ~110 ms at 300,000 entries, and /metrics,
   * the status page and the CLI's progress line ask often (a scrape stalled acknowledgements 250 ms).
   */
  private readonly tally = new Map<string, { live: number; dead: number }>();

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(entry: OutboxEntry): void {
    if (this.ids.has(entry.id)) return;
    const dead = entry.status === 'dead';
    this.ids.set(entry.id, { connector: entry.connector, order: entry.order, key: entry.key, dead });
    this.count(entry.connector, 1, dead ? 1 : 0);
    let byOrder = this.queues.get(entry.connector);
    if (!byOrder) this.queues.set(entry.connector, (byOrder = new ShardedMap()));
    const queue = byOrder.get(entry.order);
    if (!queue) byOrder.set(entry.order, [entry.id]);
    else queue.push(entry.id);
    this.refs.set(entry.key, (this.refs.get(entry.key) ?? 0) + 1);
  }

  /**
   * The entry no longer needs its record (it is done): returns how many entries still do. Its place at
   * the head of its order key is kept until `remove`, so the next entry of the key waits until the
   * "done" is durable and a crash can never replay an older change after a newer one.
   */
  release(id: string): number {
    const info = this.ids.get(id);
    if (!info) return Infinity;
    if (!info.released) {
      info.released = true;
      this.count(info.connector, -1, info.dead ? -1 : 0);
      const left = (this.refs.get(info.key) ?? 1) - 1;
      if (left <= 0) this.refs.delete(info.key);
      else this.refs.set(info.key, left);
    }
    return this.refs.get(info.key) ?? 0;
  }

  /** Forgets an entry (released first if it was not). */
  remove(id: string): void {
    const info = this.ids.get(id);
    if (!info) return;
    this.release(id);
    this.ids.delete(id);
    const byOrder = this.queues.get(info.connector);
    const queue = byOrder?.get(info.order);
    if (!queue) return;
    // Almost always the head: only heads run.
    const at = queue[0] === id ? 0 : queue.indexOf(id);
    if (at >= 0) queue.splice(at, 1);
    if (queue.length === 0) byOrder!.delete(info.order);
  }

  /** Records that an entry became dead, or is dead no more (a retry by hand): see counts. */
  setDead(id: string, dead: boolean): void {
    const info = this.ids.get(id);
    if (!info || info.released || Boolean(info.dead) === dead) return;
    info.dead = dead;
    this.count(info.connector, 0, dead ? 1 : -1);
  }

  /** Entries still queued (pending or being delivered) and dead ones, of a connector or of all. */
  counts(connector?: string): { depth: number; dead: number } {
    let live = 0;
    let dead = 0;
    for (const [name, t] of this.tally) {
      if (connector !== undefined && name !== connector) continue;
      live += t.live;
      dead += t.dead;
    }
    return { depth: live - dead, dead };
  }

  private count(connector: string, live: number, dead: number): void {
    const t = this.tally.get(connector) ?? { live: 0, dead: 0 };
    t.live += live;
    t.dead += dead;
    this.tally.set(connector, t);
  }

  /** Sorts each queue by seq (after loading entries in arbitrary order). */
  sortBy(seqOf: (id: string) => number): void {
    for (const byOrder of this.queues.values()) for (const queue of byOrder.values()) queue.sort((a, b) => seqOf(a) - seqOf(b));
  }

  references(recordId: string): number {
    return this.refs.get(recordId) ?? 0;
  }

  /** The oldest entry id of a connector's order key: the only one allowed to run. */
  head(connector: string, order: string): string | undefined {
    return this.queues.get(connector)?.get(order)?.[0];
  }

  /** The head entry id of every order key of a connector. */
  *heads(connector: string): Generator<string> {
    const byOrder = this.queues.get(connector);
    if (!byOrder) return;
    for (const queue of byOrder.values()) if (queue[0] !== undefined) yield queue[0];
  }
}
