import type { Logger } from 'pino';
import { BridgeError } from '../errors.js';
import type { Store } from '../store/index.js';
import { createdChangeOf } from './created-change.js';
import type { OutboxPort } from './ports.js';
import { POLLED_STREAMS, STATE_COLLECTION, storeSnapshotView, type PolledStream } from './snapshot.js';
import { createYielder } from './yielder.js';

/**
 * The backlog of a first `emit` cycle (issue 7): the `created` changes of a stream whose snapshot was
 * empty, put into the outbox after the cycle rather than in its commit.
 *
 * Why: such a cycle emits one change per record (300,000 at the bench's size). Enqueueing them in the
 * commit made a first cycle 3.0-3.4× the time of fetching and parsing the lists (an outbox entry, its
 * index and the record's text written to the WAL again, per record, on the daemon's thread). Each of
 * these changes is fully determined by the record's snapshot entry (its id is the entry's chain, its
 * record the entry's text; see diff.ts), so the commit writes the entries and, in its FIRST chunk, a
 * marker `poll.backlog.<stream>` = { detectedAt }. The marker is the promise of one created change per
 * snapshot key, made durable with the first entry it covers; the backlog keeps it afterwards by
 * enqueueing the changes in ascending key order, chunk by chunk, each chunk's outbox entries and the
 * marker's progress (`after`: the last key done) in ONE store commit, and deletes the marker with the
 * last chunk. A crash anywhere resumes after `after`; the outbox skips ids it already holds, so a key
 * done twice is still one delivery.
 *
 * The one rule that keeps this exact: a snapshot entry must not change before its created change is
 * in the outbox. Every cycle that commits a stream therefore calls `finish(stream)` first (cycle.ts),
 * which enqueues whatever is left at once; the next scheduled cycle minutes later normally finds
 * nothing left.
 *
 * Between cycles the backlog paces itself on the outbox: it adds a chunk only while fewer than
 * `highWater` deliveries are queued, and waits for deliveries otherwise, so the outbox holds a few
 * tens of thousands of records rather than all 300,000 at once.
 */
export interface Backlog {
  /** Resumes markers found in the store (after a restart); call once the outbox can take entries. */
  start(): void;
  /** Starts working on the markers a commit just wrote. */
  kick(): void;
  /** Enqueues everything left of `stream` (of every stream when omitted) now, paced or not; resolves when durable. */
  finish(stream?: PolledStream): Promise<void>;
  /** Resolves when nothing is left, at the backlog's own pace (unlike finish). */
  whenDone(): Promise<void>;
  /** Changes not in the outbox yet, by stream (0 when none are pending; an estimate until a run counted them). */
  remaining(stream: PolledStream): number;
  /** Stops after the chunk being committed; a later start resumes from the store. */
  stop(): Promise<void>;
}

export interface BacklogMarker {
  /** The first cycle's detectedAt, the same in every change it promises. */
  detectedAt: string;
  /** The last key whose change is in the outbox (numeric order); none yet when absent. */
  after?: number;
}

export const backlogKey = (stream: PolledStream) => `poll.backlog.${stream}`;

export interface BacklogOptions {
  store: Store;
  outbox: OutboxPort;
  log: Logger;
  /**
   * Changes per commit (default 200). Small, because webhook acknowledgements wait for the WAL write
   * they share: with 1,000 (~1.7 MB per write) their p50 during a first cycle's deliveries was
   * 42-71 ms, with 200 13 ms (bench:poll, poll/README.md).
   */
  chunkSize?: number;
  /** Enqueue while fewer deliveries than this are queued (default 5,000). */
  highWater?: number;
  /** Longest stretch of synchronous work between yields to the event loop (default 4 ms). */
  budgetMs?: number;
}

/** The keys of a stream's snapshot after `after`, ascending by numeric id (ids are safe integers). */
export function pendingKeys(keys: Iterable<string>, after: number | undefined): Float64Array {
  const ids: number[] = [];
  for (const key of keys) {
    const id = Number(key);
    if (after === undefined || id > after) ids.push(id);
  }
  // A typed array sorts numbers natively: ~20 ms for 200,000 keys against ~100 ms with a comparator.
  return Float64Array.from(ids).sort();
}

export function createBacklog(options: BacklogOptions): Backlog {
  const { store, outbox, log } = options;
  const chunkSize = options.chunkSize ?? 200;
  const highWater = options.highWater ?? 5000;
  const budgetMs = options.budgetMs ?? 4;
  const left = new Map<PolledStream, number>();
  let running: Promise<void> | undefined;
  let urgent = 0;
  let stopped = false;
  /** Wakes a paced run waiting for deliveries (or for finish/stop). */
  let wake: (() => void) | undefined;
  const nudge = () => {
    const resolve = wake;
    wake = undefined;
    resolve?.();
  };
  let unsubscribe: (() => void)[] = [];
  // A paced run waits for the outbox to fall to half the high-water mark (not just below it, which
  // would wake it for every single delivery).
  const onProgress = () => {
    if (wake && outbox.depth() < highWater / 2) nudge();
  };

  const marker = (stream: PolledStream) => store.get<BacklogMarker>(STATE_COLLECTION, backlogKey(stream));
  const pending = () => POLLED_STREAMS.filter((stream) => marker(stream) !== undefined);

  async function waitForRoom(): Promise<void> {
    while (urgent === 0 && !stopped && outbox.depth() >= highWater) {
      await new Promise<void>((resolve) => (wake = resolve));
    }
  }

  async function drain(stream: PolledStream): Promise<void> {
    const start = marker(stream);
    if (!start) return;
    const yielder = createYielder(budgetMs);
    const snapshot = storeSnapshotView(store, stream);
    const keys = pendingKeys(snapshot.keys(), start.after);
    left.set(stream, keys.length);
    for (let from = 0; from < keys.length || from === 0; from += chunkSize) {
      await waitForRoom();
      if (stopped) return;
      const to = Math.min(from + chunkSize, keys.length);
      const changes = [];
      for (let i = from; i < to; i++) {
        const key = String(keys[i]);
        const stored = snapshot.get(key);
        if (stored !== undefined) changes.push(createdChangeOf(stream, key, stored, start.detectedAt));
      }
      const last = to >= keys.length;
      const progress = last
        ? { op: 'del' as const, c: STATE_COLLECTION, k: backlogKey(stream) }
        : { op: 'put' as const, c: STATE_COLLECTION, k: backlogKey(stream), v: { detectedAt: start.detectedAt, after: keys[to - 1] } };
      // Built and committed in one tick (OutboxPort.enqueueOps); the next chunk waits for this one to
      // be durable, so `after` never runs ahead of what is on disk.
      await store.commit([...outbox.enqueueOps(changes), progress]);
      outbox.notify();
      left.set(stream, keys.length - to);
      if (last) return;
      if (yielder.due()) await yielder.pause();
    }
  }

  async function run(): Promise<void> {
    for (let streams = pending(); streams.length > 0 && !stopped; streams = pending()) {
      for (const stream of streams) await drain(stream);
    }
  }

  function ensureRunning(): Promise<void> {
    if (unsubscribe.length === 0) unsubscribe = [outbox.on('delivered', onProgress), outbox.on('dead', onProgress)];
    running ??= run().finally(() => {
      running = undefined;
    });
    return running;
  }

  return {
    start() {
      stopped = false;
      if (pending().length > 0) {
        log.info({ streams: pending() }, 'resuming the created changes of a first cycle not all in the outbox yet');
        backgroundRun();
      }
    },
    kick() {
      // In a turn of its own: the caller (a cycle's end) goes on first; sorting 200,000 keys is ~50 ms.
      setImmediate(() => {
        if (!stopped && pending().length > 0) backgroundRun();
      });
    },
    async finish(stream) {
      urgent += 1;
      nudge();
      try {
        while (stream === undefined ? pending().length > 0 : marker(stream) !== undefined) {
          if (stopped) throw new BridgeError('poll.stopped', 'the poller is stopping: the first cycle\'s backlog resumes at the next start', { retryable: true });
          await ensureRunning();
        }
      } finally {
        urgent -= 1;
      }
    },
    async whenDone() {
      while (!stopped && pending().length > 0) await ensureRunning();
    },
    remaining(stream) {
      return marker(stream) === undefined ? 0 : (left.get(stream) ?? storeSnapshotView(store, stream).size);
    },
    async stop() {
      stopped = true;
      nudge();
      await running?.catch(() => {});
      for (const off of unsubscribe) off();
      unsubscribe = [];
    },
  };

  function backgroundRun(): void {
    ensureRunning().catch((error: unknown) => {
      // The store refused a write: it stays unhealthy until restarted, and the marker resumes then.
      log.error({ err: error }, 'the created changes of a first cycle could not be put into the outbox');
    });
  }
}
