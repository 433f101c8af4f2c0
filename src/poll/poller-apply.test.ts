import { describe, expect, it, vi } from 'vitest';
import { ENGINES } from '../../test/support/stores.js';
import type { ChangeRecord } from '../records.js';
import type { Store } from '../store/index.js';
import type { Poller } from './poller.js';
import { testStudent, type MemoryLists, type RecordingOutbox } from '../../test/support/poll.js';
import { ids, injected, pollerPerTest } from '../../test/support/poller-setup.js';

/** Applying a cycle's changes: deliveries held meanwhile, and a failure halfway that a re-run makes good. */
describe.each(ENGINES)('poller on %s', (engine) => {
  let store: Store;
  let lists: MemoryLists;
  let outbox: RecordingOutbox;
  let poller: Poller;
  pollerPerTest(engine, (fixture) => ({ store, lists, outbox, poller } = fixture));

  it('holds deliveries back while it applies, and lets them go after, also when applying fails', async () => {
    const heldAtApply: number[] = [];
    let fail = false;
    for (const name of ['applyFresh', 'applyChanges'] as const) {
      const real = store.snapshot[name].bind(store.snapshot) as (...args: unknown[]) => Promise<unknown>;
      vi.spyOn(store.snapshot, name).mockImplementation(((...args: unknown[]) => {
        heldAtApply.push(outbox.held);
        return fail ? Promise.reject(injected()) : real(...args);
      }) as never);
    }
    expect((await poller.runCycle()).outcome).toBe('ok');
    expect(heldAtApply).toEqual([1, 1]);
    expect(outbox.held).toBe(0);
    lists.students.push(testStudent(11));
    fail = true;
    expect((await poller.runCycle()).outcome).toBe('failed');
    expect(outbox.held).toBe(0);
  });

  it('applying failing mid-cycle, then a clean re-run: the same ids, nothing lost or doubled', async () => {
    await poller.runCycle();
    for (const id of [2, 5, 8, 9]) lists.students[id - 1] = testStudent(id, `Zmiana${id}`);
    lists.students.push(testStudent(11));
    const expected = ids((await poller.runCycle({ dryRun: true })).changes ?? []);
    expect(expected).toHaveLength(5);
    const before = (await outbox.records()).length;
    const real = store.snapshot.applyChanges.bind(store.snapshot);
    let calls = 0;
    const apply = vi.spyOn(store.snapshot, 'applyChanges').mockImplementation((stream, options) => (++calls === 2 ? Promise.reject(injected()) : real(stream, options)));
    expect(await poller.runCycle()).toMatchObject({ outcome: 'failed', reason: 'store.unavailable' });
    expect((await outbox.records()).length - before).toBe(3); // the first chunk, whole
    apply.mockRestore();
    expect((await poller.runCycle()).outcome).toBe('ok');
    expect(ids((await outbox.records()).slice(before)).sort()).toEqual([...expected].sort());
    expect((await poller.runCycle()).streams.students).toMatchObject({ created: 0, updated: 0 });
  });

  it('applying failing halfway leaves no shortcut behind: a record sent again as it was before is diffed', async () => {
    await poller.runCycle();
    for (const id of [1, 2, 3, 4, 5, 6, 7]) lists.students[id - 1] = testStudent(id, `Zmiana${id}`);
    const real = store.snapshot.applyChanges.bind(store.snapshot);
    let calls = 0;
    const apply = vi.spyOn(store.snapshot, 'applyChanges').mockImplementation((stream, options) => (++calls === 2 ? Promise.reject(injected()) : real(stream, options)));
    expect(await poller.runCycle()).toMatchObject({ outcome: 'failed', reason: 'store.unavailable' });
    apply.mockRestore();
    // The first chunk (students 1-3) was applied; now student 1 comes back byte for byte as it was
    // before. The snapshot says Zmiana1, so that is a change, not a known record.
    expect((await store.snapshot.rows('students', [1]))[0]!.body).toContain('Zmiana1');
    lists.students[0] = testStudent(1);
    const before = (await outbox.records()).length;
    expect((await poller.runCycle()).outcome).toBe('ok');
    const back = ((await outbox.records()).slice(before) as ChangeRecord[]).filter((r) => r.stream === 'students' && r.key === 1);
    expect(back.map((r) => r.op)).toEqual(['updated']);
    expect(back[0]!.changes.some((c) => 'from' in c && c.from === 'Zmiana1')).toBe(true);
  });
});
