import { describe, expect, it, vi } from 'vitest';
import { ENGINES } from '../../test/support/stores.js';
import { createListWorker } from '../upstream/list/index.js';
import type { Poller } from './poller.js';
import { testStudent, type MemoryLists } from '../../test/support/poll.js';
import { pollerPerTest, watchedWorker } from '../../test/support/poller-setup.js';

/** The poller and its list worker: when the worker's threads start, and which records it parses. */
describe.each(ENGINES)('poller on %s', (engine) => {
  let lists: MemoryLists;
  let poller: Poller;
  const { makePoller } = pollerPerTest(engine, (fixture) => ({ lists, poller } = fixture));

  it('starts the list worker\'s threads with itself only when asked (the daemon), else at the first read', async () => {
    const worker = createListWorker();
    const warm = vi.spyOn(worker, 'warm');
    await poller.stop();
    poller = makePoller({ lists: worker });
    await poller.start();
    expect(warm).not.toHaveBeenCalled();
    await poller.stop();
    poller = makePoller({ lists: worker, warmWorkers: true });
    await poller.start();
    expect(warm).toHaveBeenCalledTimes(1);
    expect((await poller.runCycle()).outcome).toBe('ok');
  });

  it('parses only records whose bytes changed since the snapshot, also with a new worker that reads the index from the store', async () => {
    const parsed: number[] = [];
    await poller.stop();
    poller = makePoller({ lists: watchedWorker('students', parsed) });
    await poller.runCycle();
    expect(parsed).toHaveLength(10);
    parsed.length = 0;
    lists.students[4] = testStudent(5, 'Inna');
    expect((await poller.runCycle()).streams.students).toMatchObject({ fetched: 10, created: 0, updated: 1, deleted: 0 });
    expect(parsed).toEqual([5]);
    // A restarted daemon: a worker with no index of its own takes the stored one.
    await poller.stop();
    parsed.length = 0;
    poller = makePoller({ lists: watchedWorker('students', parsed) });
    lists.students[6] = testStudent(7, 'Inny');
    expect((await poller.runCycle()).streams.students).toMatchObject({ fetched: 10, updated: 1 });
    expect(parsed).toEqual([7]);
  });
});
