import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { OutboxEntry } from './entry.js';
import { ReadyHeap } from './ready-heap.js';
import { stillStands, takeReady } from './select.js';

const entry = (id: string, patch: Partial<OutboxEntry> = {}): OutboxEntry => ({
  id, connector: 'a', key: id, stream: 'students', order: `students:${id}`, seq: 1,
  status: 'pending', enqueuedAt: 0, runAt: 0, attempts: 0, ...patch,
});

/** Runs takeReady over `entries` as the store, every one a head unless listed in `notHead`. */
function take(entries: OutboxEntry[], now: number, limit: number, options: { busy?: string[]; notHead?: string[]; stale?: { id: string; runAt: number }[] } = {}) {
  const heap = new ReadyHeap();
  for (const e of entries) heap.push({ id: e.id, runAt: e.runAt, seq: e.seq });
  for (const s of options.stale ?? []) heap.push({ ...s, seq: 0 });
  const byId = new Map(entries.map((e) => [e.id, e]));
  const out = takeReady(heap, now, limit, (c) => {
    const e = byId.get(c.id);
    return stillStands(e, c, !(options.notHead ?? []).includes(c.id), (options.busy ?? []).includes(c.id)) ? e : undefined;
  });
  return { ids: out.batch.map((e) => e.id), wakeAt: out.wakeAt, left: heap.size };
}

describe('takeReady', () => {
  it.each([
    ['a due pending head', [entry('x')], {}, ['x'], undefined],
    ['not yet due: wake at its runAt', [entry('x', { runAt: 50 })], {}, [], 50],
    ['dead holds back only itself', [entry('x', { status: 'dead' }), entry('y', { seq: 2 })], {}, ['y'], undefined],
    ['in flight is skipped', [entry('x'), entry('y', { seq: 2 })], { busy: ['x'] }, ['y'], undefined],
    ['not the head of its key: waits', [entry('x'), entry('y', { seq: 2 })], { notHead: ['y'] }, ['x'], undefined],
    ['active (leased) is skipped', [entry('x', { status: 'active' })], {}, [], undefined],
    ['soonest first, then oldest', [entry('late', { seq: 9 }), entry('early', { seq: 3 }), entry('due-first', { seq: 20, runAt: -5 })], {}, ['due-first', 'early', 'late'], undefined],
    ['a stale candidate (runAt changed) is dropped', [entry('x', { runAt: 70 })], { stale: [{ id: 'x', runAt: 5 }] }, [], 70],
    ['a duplicate candidate is taken once', [entry('x')], { stale: [{ id: 'x', runAt: 0 }] }, ['x'], undefined],
  ])('%s', (_name, entries, options, ids, wakeAt) => {
    const out = take(entries, 10, 5, options);
    expect(out.ids).toEqual(ids);
    expect(out.wakeAt).toBe(wakeAt);
  });

  it('takes at most the limit, only due pending heads, each once, soonest first', () => {
    const raw = fc.array(
      fc.record({ seq: fc.nat(), runAt: fc.integer({ min: 0, max: 20 }), status: fc.constantFrom('pending', 'active', 'dead') as fc.Arbitrary<OutboxEntry['status']> }),
      { maxLength: 30 },
    );
    fc.assert(
      fc.property(raw, fc.integer({ min: 1, max: 10 }), (list, limit) => {
        const entries = list.map((r, i) => entry(`e${i}`, r));
        const { ids, left } = take(entries, 10, limit);
        const due = entries.filter((e) => e.status === 'pending' && e.runAt <= 10);
        expect(ids).toHaveLength(Math.min(limit, due.length));
        expect(new Set(ids).size).toBe(ids.length);
        const taken = ids.map((id) => entries.find((e) => e.id === id)!);
        for (const e of taken) expect(e.status === 'pending' && e.runAt <= 10).toBe(true);
        for (let i = 1; i < taken.length; i++) {
          const [a, b] = [taken[i - 1]!, taken[i]!];
          expect(a.runAt < b.runAt || (a.runAt === b.runAt && a.seq <= b.seq)).toBe(true);
        }
        expect(left).toBeLessThanOrEqual(entries.length - ids.length);
      }),
    );
  });
});
