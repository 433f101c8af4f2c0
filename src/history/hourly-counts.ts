import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { describeError } from '../errors.js';
import type { Component } from '../lifecycle.js';
import { hourOf, type HistoryStore, type TallyEntry } from '../store/index.js';

/**
 * Counts per hour kept in memory and added to the store's tallies every `flushMs` and at stop, so
 * a counted request (a webhook delivery) costs no store write of its own. A flush that fails keeps
 * its counts for the next one: the store adds them whenever they arrive.
 */
export interface HourlyCounts extends Component {
  add(label: string, n?: number): void;
  flush(): Promise<void>;
  /** The counts not handed to the store yet. */
  unflushed(): TallyEntry[];
}

export function createHourlyCounts(options: {
  kind: string;
  store: Pick<HistoryStore, 'count'>;
  clock: Clock;
  log: Logger;
  flushMs?: number;
}): HourlyCounts {
  const { kind, store, clock, log } = options;
  const flushMs = options.flushMs ?? 10_000;
  let counts = new Map<string, TallyEntry>();
  let stopping: AbortController | undefined;
  let loop: Promise<void> | undefined;

  const flush = async () => {
    if (counts.size === 0) return;
    const taken = counts;
    counts = new Map();
    try {
      await store.count([...taken.values()]);
    } catch (error) {
      for (const entry of taken.values()) add(entry.label, entry.n, entry.hour);
      log.debug({ err: describeError(error), kind }, 'hourly counts not stored yet; kept for the next flush');
    }
  };

  function add(label: string, n = 1, hour = hourOf(clock.now())): void {
    const key = `${hour}\u0000${label}`;
    const seen = counts.get(key);
    if (seen) seen.n += n;
    else counts.set(key, { hour, kind, label, n });
  }

  return {
    name: `hourly-counts:${kind}`,
    add: (label, n) => add(label, n),
    flush,
    unflushed: () => [...counts.values()].map((entry) => ({ ...entry })),
    async start() {
      if (loop) return;
      const abort = new AbortController();
      stopping = abort;
      loop = (async () => {
        while (!abort.signal.aborted) {
          await clock.sleep(flushMs, abort.signal).catch(() => {});
          await flush();
        }
      })();
    },
    async stop() {
      if (!loop) return;
      stopping?.abort(new Error('stopping'));
      await loop;
      loop = undefined;
    },
  };
}
