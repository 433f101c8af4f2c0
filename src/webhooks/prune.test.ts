import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ENGINES, testStore } from '../../test/support/stores.js';
import type { InboxEntry, Store } from '../store/index.js';
import { createInboxPruner } from './prune.js';
import { testClock } from '../../test/support/clock.js';
import { TEST_NOW_MS } from '../../test/support/webhooks.js';

const HOUR = 3_600_000;
const log = pino({ level: 'silent' });

function entry(id: string, receivedAtMs: number): InboxEntry {
  return { id, event: 'invoice.created', receivedAt: new Date(receivedAtMs).toISOString(), receivedAtMs, body: '{}', recordIds: [], reprocessed: 0 };
}

async function kept(store: Store, ids: string[]): Promise<string[]> {
  const found = await Promise.all(ids.map((id) => store.inbox.get(id)));
  return ids.filter((_, i) => found[i] !== undefined);
}

describe.each(ENGINES)('inbox pruner on %s', (engine) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  it('forgets events older than the retention at start and keeps the rest, then stops cleanly twice', async () => {
    const clock = testClock(TEST_NOW_MS, { sleep: 'hold' });
    const made = await testStore(engine, { clock });
    cleanups.push(made.cleanup);
    const { store } = made;
    const ids = ['old', 'at-cutoff', 'recent', 'future'];
    for (const [i, at] of [TEST_NOW_MS - 121 * HOUR, TEST_NOW_MS - 120 * HOUR, TEST_NOW_MS - HOUR, TEST_NOW_MS + HOUR].entries()) {
      await store.inbox.accept(entry(ids[i]!, at), []);
    }
    // The run at start is not awaited by start(): the test awaits its answer instead.
    const runs: Promise<number>[] = [];
    const pruner = createInboxPruner({
      store: {
        prune: (before, limit) => {
          const run = store.inbox.prune(before, limit);
          runs.push(run);
          return run;
        },
      },
      clock, log, retentionHours: 120,
    });
    await pruner.start();
    expect(await runs[0]).toBe(1);
    expect(await kept(store, ids)).toEqual(['at-cutoff', 'recent', 'future']);

    clock.advance(1);
    expect(await pruner.prune()).toBe(1);
    expect(await kept(store, ids)).toEqual(['recent', 'future']);
    clock.advance(120 * HOUR);
    expect(await pruner.prune()).toBe(1);
    expect(await kept(store, ids)).toEqual(['future']);
    await pruner.stop();
    await pruner.stop();
    expect(runs).toHaveLength(3);
  });

  it('forgets a chunk of events per transaction until none is left', async () => {
    const clock = testClock(TEST_NOW_MS, { sleep: 'hold' });
    const made = await testStore(engine, { clock });
    cleanups.push(made.cleanup);
    const { store } = made;
    const ids = ['a', 'b', 'c', 'd', 'e', 'recent'];
    for (const [i, id] of ids.entries()) await store.inbox.accept(entry(id, TEST_NOW_MS - (id === 'recent' ? 1 : 200 - i) * HOUR), []);
    const chunks: number[] = [];
    const pruner = createInboxPruner({
      store: {
        prune: async (before, limit) => {
          const gone = await store.inbox.prune(before, limit);
          chunks.push(gone);
          return gone;
        },
      },
      clock, log, retentionHours: 120, chunk: 2,
    });
    expect(await pruner.prune()).toBe(5);
    expect(chunks).toEqual([2, 2, 1]);
    expect(await kept(store, ids)).toEqual(['recent']);
  });
});

describe('inbox pruner', () => {
  it('survives a failing prune at start (logged, never an unhandled rejection) and stops cleanly', async () => {
    const clock = testClock(TEST_NOW_MS, { sleep: 'hold' });
    let failed: () => void = () => {};
    const attempted = new Promise<void>((resolve) => (failed = resolve));
    const pruner = createInboxPruner({
      store: {
        prune: () => {
          failed();
          return Promise.reject(new Error('disk full (injected)'));
        },
      },
      clock, log, retentionHours: 120,
    });
    await pruner.start();
    await attempted;
    await pruner.stop();
  });
});
