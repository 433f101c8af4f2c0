import { describe, expect, it, vi } from 'vitest';
import { ENGINES } from '../../test/support/stores.js';
import { createMetricsRegistry } from '../metrics.js';
import type { ChangeRecord } from '../records.js';
import type { Store } from '../store/index.js';
import type { Poller } from './poller.js';
import { initialDoneKey } from './snapshot.js';
import { testStudent, type MemoryLists, type RecordingOutbox } from '../../test/support/poll.js';
import { ids, injected, pollerPerTest } from '../../test/support/poller-setup.js';

/** Poll cycles and the changes they find: first cycles, baselines, dry runs, one cycle at a time, metrics. */
describe.each(ENGINES)('poller on %s', (engine) => {
  let store: Store;
  let lists: MemoryLists;
  let outbox: RecordingOutbox;
  let poller: Poller;
  const { makePoller } = pollerPerTest(engine, (fixture) => ({ store, lists, outbox, poller } = fixture));

  it('first cycle emits everything as created, then a no-change cycle writes nothing', async () => {
    const predicted = ids((await poller.runCycle({ dryRun: true })).changes ?? []);
    const first = await poller.runCycle({ trigger: 'test' });
    expect(first).toMatchObject({ outcome: 'ok', streams: { students: { fetched: 10, created: 10, initial: 'emit' }, users: { created: 10 } } });
    // The created changes are delivered from the snapshot (created ranges), with the ids a dry run gives.
    expect(ids(await outbox.records())).toEqual(predicted);
    expect(predicted).toHaveLength(20);
    expect(await store.snapshot.size('students')).toBe(10);
    expect(await store.state.get(initialDoneKey('users'))).toMatchObject({ mode: 'emit' });
    expect(outbox.notified).toBeGreaterThan(0);
    expect(Object.keys(first.phases)).toEqual(['readMs', 'checkMs', 'commitMs']);
    const phaseTotal = Object.values(first.phases).reduce((a, b) => a + b, 0);
    expect(Object.values(first.phases).every((ms) => ms >= 0) && phaseTotal <= first.durationMs).toBe(true);

    const writes = [vi.spyOn(store.snapshot, 'stageChanges'), vi.spyOn(store.snapshot, 'applyChanges'), vi.spyOn(store.snapshot, 'applyFresh')];
    const second = await poller.runCycle();
    expect(second.outcome).toBe('ok');
    expect(second.streams.students).toEqual({ fetched: 10, created: 0, updated: 0, deleted: 0, baselined: 0 });
    for (const write of writes) expect(write).not.toHaveBeenCalled();
  });

  it('a created change keeps the record as the first cycle saw it, and goes before later changes of its key', async () => {
    // Nothing is delivered between the cycles: the second one finds every created change still owed.
    await poller.runCycle();
    lists.students[7] = testStudent(8, 'Zmiana8');
    lists.users = lists.users.filter((u) => u.id !== 9);
    const second = await poller.runCycle();
    expect(second.streams).toMatchObject({ students: { updated: 1 }, users: { deleted: 1 } });
    const records = (await outbox.records()) as ChangeRecord[];
    expect(records).toHaveLength(22);
    const ofKey = (stream: string, key: number) => records.filter((r) => r.stream === stream && r.key === key);
    expect(ofKey('students', 8).map((r) => r.op)).toEqual(['created', 'updated']);
    expect(ofKey('students', 8)[0]!.record).toMatchObject({ user: { lastName: 'Nazwisko8' } });
    expect(ofKey('students', 8)[1]!.record).toMatchObject({ user: { lastName: 'Zmiana8' } });
    expect(ofKey('users', 9).map((r) => r.op)).toEqual(['created', 'deleted']);
    expect(ofKey('users', 9)[0]!.record).toMatchObject({ lastName: 'Nazwisko9' });
  });

  it('a key deleted and back with the same content is a change of its own each time, also in a dry run', async () => {
    await poller.runCycle();
    const student = lists.students.find((st) => st.id === 3)!;
    const away = () => (lists.students = lists.students.filter((st) => st.id !== 3));
    const back = () => (lists.students = [...lists.students, student]);
    for (const step of [away, back, away, back]) {
      step();
      const predicted = ids((await poller.runCycle({ dryRun: true })).changes ?? []);
      await poller.runCycle();
      expect(ids((await outbox.records()).filter((r) => (r as ChangeRecord).stream === 'students' && (r as ChangeRecord).key === 3).slice(-1))).toEqual(predicted);
    }
    const ofKey = ((await outbox.records()) as ChangeRecord[]).filter((r) => r.stream === 'students' && r.key === 3);
    expect(ofKey.map((r) => r.op)).toEqual(['created', 'deleted', 'created', 'deleted', 'created']);
    // Five changes, five ids: connectors, idempotent by id, take each.
    expect(new Set(ofKey.map((r) => r.id)).size).toBe(5);
    expect(ofKey.at(-1)!.record).toEqual(ofKey[0]!.record);
  });

  it('a stream whose first list was empty gets its first records as created changes', async () => {
    lists.students = [];
    expect((await poller.runCycle()).streams.students).toMatchObject({ fetched: 0, created: 0, initial: 'emit' });
    const before = (await outbox.records()).length;
    lists.students = [testStudent(4), testStudent(2), testStudent(9)];
    const predicted = ids((await poller.runCycle({ dryRun: true })).changes ?? []);
    expect((await poller.runCycle()).streams.students).toMatchObject({ fetched: 3, created: 3 });
    expect(ids((await outbox.records()).slice(before))).toEqual(predicted);
    expect(predicted).toHaveLength(3);
  });

  it('baseline records the first cycle silently and reports later changes', async () => {
    await poller.stop();
    poller = makePoller({ poll: { initial: 'baseline', maxDeleteRatio: 0.2 } });
    expect((await poller.runCycle()).streams.students).toMatchObject({ baselined: 10, created: 0, initial: 'baseline' });
    expect(await outbox.records()).toEqual([]);
    lists.students[2] = testStudent(3, 'Nowak');
    lists.students.push(testStudent(11));
    const result = await poller.runCycle();
    expect(result.streams.students).toMatchObject({ created: 1, updated: 1, baselined: 0 });
    expect(result.streams.students!.initial).toBeUndefined();
    expect((await outbox.records()).map((r) => (r as ChangeRecord).op)).toEqual(['updated', 'created']);
  });

  it('a dry run reports the changes and writes nothing', async () => {
    const writes = (['begin', 'stageFresh', 'stageChanges', 'applyFresh', 'applyChanges'] as const).map((name) => vi.spyOn(store.snapshot, name));
    const result = await poller.runCycle({ dryRun: true });
    expect(result).toMatchObject({ outcome: 'ok', dryRun: true });
    expect(Object.keys(result.phases)).toEqual(['readMs', 'checkMs']); // no commit phase
    expect(result.changes).toHaveLength(20);
    for (const write of writes) expect(write).not.toHaveBeenCalled();
    expect(poller.lastResult()).toBeUndefined();
  });

  it('runs cycles one at a time', async () => {
    let open!: () => void;
    lists.gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const first = poller.runCycle();
    const second = poller.runCycle();
    expect(poller.busy()).toBe(true);
    lists.gate = undefined;
    open();
    const [a, b] = await Promise.all([first, second]);
    expect(a.streams.students!.created).toBe(10);
    expect(b.streams.students!.created).toBe(0);
    expect(poller.busy()).toBe(false);
  });

  it('is done only once its run is in the history, which a tick notes itself done after', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const real = store.history.recordRun.bind(store.history);
    const recordRun = vi.spyOn(store.history, 'recordRun').mockImplementation(async (run, patch) => {
      await gate;
      return real(run, patch);
    });
    let done = false;
    const cycle = poller.runCycle().then((result) => {
      done = true;
      return result;
    });
    await vi.waitFor(() => expect(recordRun).toHaveBeenCalledOnce());
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    expect(poller.busy()).toBe(true);
    release();
    const result = await cycle;
    expect((await store.history.runs({ since: 0, limit: 10 })).map((run) => run.startedAt)).toEqual([Date.parse(result.startedAt)]);
    expect(poller.busy()).toBe(false);
  });

  it('keeps its outcome when its run cannot be recorded, and the next cycle runs', async () => {
    const recordRun = vi.spyOn(store.history, 'recordRun').mockRejectedValueOnce(injected());
    const first = await poller.runCycle();
    expect(first).toMatchObject({ outcome: 'ok', streams: { students: { created: 10 } } });
    expect(poller.lastResult()).toBe(first);
    expect(poller.busy()).toBe(false);
    expect(await store.history.runs({ since: 0, limit: 10 })).toEqual([]);
    const second = await poller.runCycle();
    expect(second.outcome).toBe('ok');
    expect(recordRun).toHaveBeenCalledTimes(2);
    expect((await store.history.runs({ since: 0, limit: 10 })).map((run) => run.startedAt)).toEqual([Date.parse(second.startedAt)]);
  });

  it('counts cycles, changes, aborts and what the backlog still owes in metrics', async () => {
    const metrics = createMetricsRegistry();
    await poller.stop();
    poller = makePoller({ metrics });
    await poller.runCycle();
    expect(await metrics.metrics()).toContain('schoolbridge_poll_backlog_records{stream="users"} 10');
    await outbox.records();
    lists.students = [];
    await poller.runCycle();
    const text = await metrics.metrics();
    expect(text).toContain('schoolbridge_poll_changes_total{stream="students",op="created"} 10');
    expect(text).toContain('schoolbridge_poll_aborted_total{reason="empty_list",stream="students"} 1');
    expect(text).toContain('schoolbridge_poll_cycles_total{outcome="ok"} 1');
    expect(text).toContain('schoolbridge_poll_snapshot_records{stream="users"} 10');
    expect(text).toContain('schoolbridge_poll_backlog_records{stream="users"} 0');
    expect(text).toMatch(/schoolbridge_poll_last_success_timestamp_seconds \d+/);
  });
});
