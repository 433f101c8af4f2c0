import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ReadyHeap } from './ready-heap.js';

describe('ReadyHeap', () => {
  it('pops in (runAt, seq) order, whatever the pushes', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ runAt: fc.integer({ min: 0, max: 50 }), seq: fc.nat() })), (raw) => {
        const heap = new ReadyHeap();
        raw.forEach((r, i) => heap.push({ id: `e${i}`, ...r }));
        const out = [];
        while (heap.size > 0) out.push(heap.pop()!);
        const expected = [...raw].sort((a, b) => a.runAt - b.runAt || a.seq - b.seq);
        expect(out.map((c) => [c.runAt, c.seq])).toEqual(expected.map((c) => [c.runAt, c.seq]));
      }),
    );
  });

  it('is empty when empty', () => {
    const heap = new ReadyHeap();
    expect(heap.pop()).toBeUndefined();
    expect(heap.peek()).toBeUndefined();
  });
});
