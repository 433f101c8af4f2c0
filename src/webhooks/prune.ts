import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Component } from '../lifecycle.js';
import type { Op, Store } from '../store/index.js';
import { INBOX, type InboxEntry } from './collections.js';

/**
 * Inbox keys older than the retention, to delete. Pure. The retention must outlast the upstream's
 * 3-day retry window (config enforces ≥ 96 h): a key forgotten earlier would let a late retry of an
 * acknowledged event through as new. An entry without a readable time is kept (never guess "old").
 */
export function expiredInboxKeys(entries: Iterable<[string, InboxEntry]>, nowMs: number, retentionMs: number): string[] {
  const cutoff = nowMs - retentionMs;
  const expired: string[] = [];
  for (const [key, entry] of entries) {
    const at = entry?.receivedAtMs;
    if (typeof at === 'number' && at < cutoff) expired.push(key);
  }
  return expired;
}

export interface InboxPrunerOptions {
  store: Pick<Store, 'entries' | 'commit'>;
  clock: Clock;
  log: Logger;
  retentionHours: number;
  /** How often to prune (default hourly); the first run is at start. */
  intervalMs?: number;
}

export interface InboxPruner extends Component {
  /** Deletes expired inbox entries in one commit; resolves with how many. */
  prune(): Promise<number>;
}

export function createInboxPruner(options: InboxPrunerOptions): InboxPruner {
  const { store, clock, log } = options;
  const intervalMs = options.intervalMs ?? 60 * 60 * 1000;
  let stopping: AbortController | undefined;
  let loop: Promise<void> | undefined;

  const prune = async (): Promise<number> => {
    const keys = expiredInboxKeys(store.entries<InboxEntry>(INBOX), clock.now(), options.retentionHours * 3_600_000);
    if (keys.length === 0) return 0;
    const ops: Op[] = keys.map((k) => ({ op: 'del', c: INBOX, k }));
    await store.commit(ops);
    log.info({ pruned: keys.length }, 'forgot webhook events older than the dedupe retention');
    return keys.length;
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
