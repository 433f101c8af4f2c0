import { pino } from 'pino';
import { afterEach, beforeEach } from 'vitest';
import { BridgeError } from '../../src/errors.js';
import { createMetricsRegistry } from '../../src/metrics.js';
import { createListWorker, type ListWorker, type ParseBatch } from '../../src/upstream/list/index.js';
import { createPoller, type Poller, type PollerOptions } from '../../src/poll/poller.js';
import type { Key, Store } from '../../src/store/index.js';
import { memoryLists, recordingOutbox, testStudent, testUser, type MemoryLists, type RecordingOutbox } from './poll.js';
import { testStore, type Engine, type TestStore } from './stores.js';

/** What the poller's tests work on: a fresh store, ten students and ten users upstream, a started poller. */
export interface PollerFixture {
  store: Store;
  /** The SQLite directory or the PostgreSQL URL of the store. */
  where: string;
  lists: MemoryLists;
  outbox: RecordingOutbox;
  poller: Poller;
}

const log = pino({ level: 'silent' });

export const ids = (records: readonly { id: string }[]) => records.map((r) => r.id);
export const injected = () => new BridgeError('store.unavailable', 'disk full (injected)', { retryable: true });

/**
 * Registers, in the calling describe, a fixture on a store of `engine` before each test and hands it to
 * `use`. `makePoller` makes another poller on the same store, lists and outbox; every poller made is
 * stopped after the test, then the store removed.
 */
export function pollerPerTest(engine: Engine, use: (fixture: PollerFixture) => void): { makePoller(patch?: Partial<PollerOptions>): Poller } {
  let made: TestStore;
  let current: Omit<PollerFixture, 'poller'>;
  const pollers: Poller[] = [];

  function makePoller(patch: Partial<PollerOptions> = {}): Poller {
    const poller = createPoller({
      store: current.store, upstream: current.lists, outbox: current.outbox, log, metrics: createMetricsRegistry(),
      poll: { initial: 'emit', maxDeleteRatio: 0.2 }, applyChunk: 3, ...patch,
    });
    pollers.push(poller);
    return poller;
  }

  beforeEach(async () => {
    made = await testStore(engine);
    const store = made.store;
    const lists = memoryLists(
      Array.from({ length: 10 }, (_, i) => testStudent(i + 1)),
      Array.from({ length: 10 }, (_, i) => testUser(i + 1)),
    );
    current = { store, where: made.where, lists, outbox: recordingOutbox(store) };
    const poller = makePoller();
    await poller.start();
    use({ ...current, poller });
  });

  afterEach(async () => {
    for (const p of pollers.splice(0)) await p.stop();
    await made.cleanup();
  });

  return { makePoller };
}

/** A list worker that tells which keys of a stream it handed over parsed (not recognised by their bytes). */
export function watchedWorker(stream: string, parsed: Key[]): ListWorker {
  const worker = createListWorker();
  return {
    ...worker,
    parse: (s, body, options, sink) =>
      worker.parse(s, body, options, {
        batch(batch: ParseBatch) {
          if (s === stream) parsed.push(...batch.keys, ...(batch.fresh?.keys ?? []));
          return sink.batch(batch);
        },
      }),
  };
}
