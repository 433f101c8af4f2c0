import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Component } from '../lifecycle.js';
import { pruneInChunks } from '../prune-chunks.js';
import type { InboxStore } from '../store/index.js';

/**
 * Forgets webhook events older than the dedupe retention, hourly. The retention must outlast the
 * upstream's 3-day retry window (config enforces ≥ 96 h): a key forgotten earlier would let a late
 * retry of an acknowledged event through as new.
 */
export interface InboxPrunerOptions {
  store: Pick<InboxStore, 'prune'>;
  clock: Clock;
  log: Logger;
  retentionHours: number;
  /** How often to prune (default hourly); the first run is at start. */
  intervalMs?: number;
  /** Events forgotten per transaction (prune-chunks.ts). */
  chunk?: number;
}

export interface InboxPruner extends Component {
  /** Deletes expired inbox entries, a chunk per transaction, until none is left or the pruner stops; resolves with how many. */
  prune(): Promise<number>;
}

export function createInboxPruner(options: InboxPrunerOptions): InboxPruner {
  const { store, clock, log } = options;
  const intervalMs = options.intervalMs ?? 60 * 60 * 1000;
  let stopping: AbortController | undefined;
  let loop: Promise<void> | undefined;

  const prune = async (): Promise<number> => {
    const before = clock.now() - options.retentionHours * 3_600_000;
    const pruned = await pruneInChunks((limit) => store.prune(before, limit), { clock, signal: stopping?.signal, limit: options.chunk });
    if (pruned > 0) log.info({ pruned }, 'forgot webhook events older than the dedupe retention');
    return pruned;
  };

  const run = async (signal: AbortSignal) => {
    while (!signal.aborted) {
      await prune().catch((error: unknown) => log.error({ err: error }, 'pruning the webhook inbox failed'));
      await clock.sleep(intervalMs, signal).catch(() => {});
    }
  };

  return {
    name: 'webhook-inbox-pruner',
    prune,
    async start() {
      if (loop) return;
      stopping = new AbortController();
      loop = run(stopping.signal);
    },
    async stop() {
      if (!loop) return;
      stopping?.abort(new Error('stopping'));
      await loop;
      loop = undefined;
    },
  };
}
