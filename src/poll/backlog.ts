import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { BridgeError, describeError } from '../errors.js';
import type { SnapshotStore } from '../store/index.js';
import type { OutboxPort } from './ports.js';
import { POLLED_STREAMS, type PolledStream } from './snapshot.js';

/**
 * The created changes a fresh snapshot owes (poll/README.md). A first `emit` cycle swaps in a whole
 * snapshot at once and the store notes that every row owes a `created` change; this puts them into
 * the outbox after the cycle, in key order, a chunk per transaction, each chunk noting how far it got
 * in the same transaction, so a restart resumes where it stopped and nothing is enqueued twice.
 *
 * A change is made from its snapshot row, so a row must not change before its change is enqueued:
 * every cycle that applies changes to a stream calls `finish(stream)` first. Once enqueued, a change
 * keeps the row's text even when a later cycle changes the row (the store sees to that).
 */
export interface Backlog {
  /** Resumes what a stopped daemon left owed. */
  start(): void;
  /** Works off what a cycle just left owed, in the background. */
  kick(): void;
  /** Enqueues everything owed for `stream` (every stream when omitted) now; resolves when it is durable. */
  finish(stream?: PolledStream): Promise<void>;
  /** Created changes not in the outbox yet, as last counted. */
  remaining(stream: PolledStream): number;
  /** Stops after the chunk being committed; a later start resumes from the store. */
  stop(): Promise<void>;
}

export interface BacklogOptions {
  snapshot: Pick<SnapshotStore, 'enqueueCreated' | 'createdOwed'>;
  outbox: Pick<OutboxPort, 'notify'>;
  clock: Clock;
  log: Logger;
  /** Changes per transaction (default 1,000): each is one bulk call beside the webhooks' commits. */
  chunkSize?: number;
}

export function createBacklog(options: BacklogOptions): Backlog {
  const { snapshot, outbox, clock, log } = options;
  const chunkSize = options.chunkSize ?? 1000;
  const left = new Map<PolledStream, number>();
  let running: Promise<void> | undefined;
  let stopped = false;

  async function drain(stream: PolledStream): Promise<void> {
    let owed = await snapshot.createdOwed(stream);
    left.set(stream, owed);
    while (owed > 0) {
      if (stopped) throw new BridgeError('poll.stopped', 'the poller is stopping: the created changes still owed are enqueued at the next start', { retryable: true });
      owed = await snapshot.enqueueCreated(stream, chunkSize, clock.now());
      left.set(stream, owed);
      outbox.notify();
    }
  }

  /** One drain at a time, so two never enqueue the same chunk. */
  function run(streams: readonly PolledStream[]): Promise<void> {
    const next = (running ?? Promise.resolve()).then(async () => {
      for (const stream of streams) await drain(stream);
    });
    // What `running` chains on never rejects: a failed drain is its caller's to handle.
    const settled: Promise<void> = next.then(
      () => {},
      () => {},
    ).finally(() => {
      if (running === settled) running = undefined;
    });
    running = settled;
    return next;
  }

  function background(): void {
    run(POLLED_STREAMS).catch((error: unknown) => {
      if (!stopped) log.error({ err: describeError(error) }, 'the created changes of a first cycle could not all be put into the outbox; the next cycle or start goes on');
    });
  }

  return {
    start() {
      stopped = false;
      void Promise.all(POLLED_STREAMS.map((s) => snapshot.createdOwed(s).catch(() => 0))).then((owed) => {
        if (owed.some((n) => n > 0)) {
          log.info({ owed: Object.fromEntries(POLLED_STREAMS.map((s, i) => [s, owed[i]])) }, 'resuming the created changes of a first cycle not all in the outbox yet');
          background();
        }
      });
    },
    kick() {
      if (!stopped) background();
    },
    finish: (stream) => run(stream ? [stream] : POLLED_STREAMS),
    remaining: (stream) => left.get(stream) ?? 0,
    async stop() {
      stopped = true;
      await running?.catch(() => {});
    },
  };
}
