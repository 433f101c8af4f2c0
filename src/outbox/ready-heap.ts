/**
 * The candidates a worker may run, soonest first: a binary min-heap on (runAt, seq). Items are hints,
 * not truth: an entry is pushed again whenever its runAt changes or it becomes the head of its key,
 * and the worker drops items that no longer match the stored entry when they reach the top. That
 * keeps every change O(log n), where scanning all heads would cost O(queue) per batch — ruinous for a
 * backlog of 100,000 deliveries to a receiver that is down.
 */
export interface Candidate {
  id: string;
  runAt: number;
  seq: number;
}

export class ReadyHeap {
  private readonly items: Candidate[] = [];

  get size(): number {
    return this.items.length;
  }

  push(item: Candidate): void {
    const items = this.items;
    items.push(item);
    let at = items.length - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!before(items[at]!, items[parent]!)) break;
      [items[at], items[parent]] = [items[parent]!, items[at]!];
      at = parent;
    }
  }

  peek(): Candidate | undefined {
    return this.items[0];
  }

  pop(): Candidate | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last) {
      items[0] = last;
      let at = 0;
      for (;;) {
        const left = at * 2 + 1;
        const right = left + 1;
        let smallest = at;
        if (left < items.length && before(items[left]!, items[smallest]!)) smallest = left;
        if (right < items.length && before(items[right]!, items[smallest]!)) smallest = right;
        if (smallest === at) break;
        [items[at], items[smallest]] = [items[smallest]!, items[at]!];
        at = smallest;
      }
    }
    return top;
  }
}

function before(a: Candidate, b: Candidate): boolean {
  return a.runAt < b.runAt || (a.runAt === b.runAt && a.seq < b.seq);
}
