import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { OutboxEntry } from './entry.js';
import { selectBatch } from './select.js';

const entry = (id: string, patch: Partial<OutboxEntry> = {}): OutboxEntry => ({
  id, connector: 'a', key: id, stream: 'students', order: `students:${id}`, seq: 1,
  status: 'pending', enqueuedAt: 0, runAt: 0, attempts: 0, ...patch,
});

describe('selectBatch', () => {
  it.each([
    ['a due pending head', [entry('x')], [], ['x'], undefined],
    ['not yet due: wake at its runAt', [entry('x', { runAt: 50 })], [], [], 50],
    ['dead holds back only itself', [entry('x', { status: 'dead' }), entry('y', { seq: 2 })], [], ['y'], undefined],
    ['in flight is skipped', [entry('x'), entry('y', { seq: 2 })], ['x'], ['y'], undefined],
    ['active (leased elsewhere) is skipped', [entry('x', { status: 'active' })], [], [], undefined],
    ['oldest first', [entry('late', { seq: 9 }), entry('early', { seq: 3 })], [], ['early', 'late'], undefined],
    ['earliest wake wins', [entry('x', { runAt: 70 }), entry('y', { runAt: 40 })], [], [], 40],
  ])('%s', (_name, heads, busy, ids, wakeAt) => {
    const out = selectBatch(heads, 10, 5, new Set(busy));
    expect(out.batch.map((e) => e.id)).toEqual(ids);
    expect(out.wakeAt).toBe(wakeAt);
  });

  it('never returns more than the limit, only due pending heads, in seq order', () => {
    const heads = fc.array(
      fc.record({ seq: fc.nat(), runAt: fc.integer({ min: 0, max: 20 }), status: fc.constantFrom('pending', 'active', 'dead') as fc.Arbitrary<OutboxEntry['status']> }),
      { maxLength: 30 },
    );
    fc.assert(
      fc.property(heads, fc.integer({ min: 1, max: 10 }), (raw, limit) => {
        const list = raw.map((r, i) => entry(`e${i}`, r));
        const { batch } = selectBatch(list, 10, limit, new Set());
        expect(batch.length).toBeLessThanOrEqual(limit);
        expect(batch.length).toBe(Math.min(limit, list.filter((e) => e.status === 'pending' && e.runAt <= 10).length));
        for (const e of batch) expect(e.status === 'pending' && e.runAt <= 10).toBe(true);
        for (let i = 1; i < batch.length; i++) expect(batch[i]!.seq).toBeGreaterThanOrEqual(batch[i - 1]!.seq);
      }),
    );
  });
});
