import type { OutboxEntry } from './entry.js';

/**
 * The outbox's in-memory view of its queue, rebuilt from the store at start-up: per connector, the
 * entry ids of each order key in `seq` order (the first is the head, the only one allowed to run),
 * and how many entries still reference each stored record (the record is dropped with its last one).
 * Entry values themselves are read from the store, the one source of truth.
 */
export class QueueIndex {
  private readonly queues = new Map<string, Map<string, string[]>>();
  private readonly refs = new Map<string, number>();
  private readonly ids = new Map<string, { connector: string; order: string; key: string; released?: boolean }>();

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(entry: OutboxEntry): void {
    if (this.ids.has(entry.id)) return;
    this.ids.set(entry.id, { connector: entry.connector, order: entry.order, key: entry.key });
    let byOrder = this.queues.get(entry.connector);
    if (!byOrder) this.queues.set(entry.connector, (byOrder = new Map()));
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

  *allIds(connector?: string): Generator<string> {
    for (const [name, byOrder] of this.queues) {
      if (connector !== undefined && name !== connector) continue;
      for (const queue of byOrder.values()) yield* queue;
    }
  }
}
