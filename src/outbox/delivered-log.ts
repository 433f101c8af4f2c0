/**
 * Remembers done deliveries (`entry id → deliveredAt`) for a retention window, so a record enqueued
 * again after it was delivered (a poll re-run after a crash) is not delivered again. The store holds
 * the pairs; this keeps them in delivery order so pruning reads only the expired front.
 */
export class DeliveredLog {
  private order: { id: string; at: number }[] = [];
  private start = 0;

  add(id: string, at: number): void {
    this.order.push({ id, at });
  }

  /** Loads stored pairs in any order. */
  load(pairs: Iterable<[string, number]>): void {
    for (const [id, at] of pairs) this.order.push({ id, at });
    this.order.sort((a, b) => a.at - b.at);
  }

  /** Ids delivered before `cutoff`, taken off the log. */
  expire(cutoff: number): string[] {
    const out: string[] = [];
    while (this.start < this.order.length && this.order[this.start]!.at < cutoff) out.push(this.order[this.start++]!.id);
    if (this.start > 1024 && this.start * 2 > this.order.length) {
      this.order = this.order.slice(this.start);
      this.start = 0;
    }
    return out;
  }

  get size(): number {
    return this.order.length - this.start;
  }
}
