import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { describeError } from '../errors.js';
import type { Component } from '../lifecycle.js';
import { pruneInChunks } from '../prune-chunks.js';
import type { HistoryStore, PeopleStore, ReplicaStore } from '../store/index.js';
import { PEOPLE_STREAMS } from '../streams/index.js';

const DAY_MS = 86_400_000;
/** Runs and counts per hour are kept at least this long: the console shows the last 30 days. */
export const RUN_DAYS = 30;
/**
 * The row of a replica that died without leaving (kill -9, a lost container) is kept this long after
 * its last heartbeat, for whoever looks into what happened; a stopped replica deletes its own.
 */
export const DEAD_REPLICA_DAYS = 7;
/**
 * Rows of the name index brought up to date per store call: each call is one transaction, which a
 * webhook's commit may wait behind, so it is kept to a few milliseconds.
 */
const PEOPLE_STEP = 100;
/**
 * After each step the walk rests this many times as long as the step took: a walk of a whole school
 * (after a first cycle, 3,000 steps) keeps to a third of the database's time and leaves the rest to
 * webhooks, deliveries and the next cycle.
 */
export const PEOPLE_REST = 2;

/** How long the walk rests after a step of `stepMs`. */
export const restAfter = (stepMs: number): number => Math.max(0, stepMs) * PEOPLE_REST;

/**
 * The console's background upkeep: forgets attempts older than `delivery.historyDays`, runs and
 * counts older than the runs' window and the rows of replicas dead for DEAD_REPLICA_DAYS (hourly),
 * and keeps the snapshot's name index up to date (every `refreshMs`, and when asked after a poll
 * cycle). Nothing of it is on a request's path.
 */
export interface HistoryUpkeep extends Component {
  /** The name index after the snapshot moved; resolves once it has caught up. */
  refreshPeople(): Promise<void>;
  prune(): Promise<number>;
}

export function createHistoryUpkeep(options: {
  store: { history: Pick<HistoryStore, 'prune'>; people: Pick<PeopleStore, 'refresh'>; replicas: Pick<ReplicaStore, 'forget'> };
  clock: Clock;
  log: Logger;
  historyDays: number;
  refreshMs?: number;
  pruneMs?: number;
  /** Attempts and runs forgotten per transaction (prune-chunks.ts). */
  pruneChunk?: number;
}): HistoryUpkeep {
  const { store, clock, log } = options;
  const refreshMs = options.refreshMs ?? 30_000;
  const pruneMs = options.pruneMs ?? 3_600_000;
  let refreshing: Promise<void> | undefined;
  let again = false;
  let stopping: AbortController | undefined;
  let loop: Promise<void> | undefined;

  const walk = async () => {
    for (const stream of PEOPLE_STREAMS) {
      for (;;) {
        if (stopping?.signal.aborted) return;
        const started = clock.now();
        if (!(await store.people.refresh(stream, PEOPLE_STEP))) break;
        const rest = restAfter(clock.now() - started);
        if (rest > 0) await clock.sleep(rest, stopping?.signal).catch(() => {});
      }
    }
  };
  // One walk at a time; a request during a walk makes one more after it.
  const refreshPeople = (): Promise<void> => {
    if (refreshing) {
      again = true;
      return refreshing;
    }
    refreshing = (async () => {
      do {
        again = false;
        await walk().catch((error: unknown) => log.warn({ err: describeError(error) }, 'the console name index could not be refreshed'));
      } while (again);
      refreshing = undefined;
    })();
    return refreshing;
  };

  const prune = async () => {
    const now = clock.now();
    const before = { attempts: now - options.historyDays * DAY_MS, runs: now - Math.max(RUN_DAYS, options.historyDays) * DAY_MS };
    const gone = await pruneInChunks((limit) => store.history.prune(before, limit), { clock, signal: stopping?.signal, limit: options.pruneChunk });
    if (gone > 0) log.info({ pruned: gone }, 'forgot delivery attempts and runs older than their keeping time');
    const replicas = await store.replicas.forget(now - DEAD_REPLICA_DAYS * DAY_MS);
    if (replicas > 0) log.info({ replicas }, `forgot replicas not seen for ${DEAD_REPLICA_DAYS} days`);
    return gone;
  };

  return {
    name: 'history-upkeep',
    refreshPeople,
    prune,
    async start() {
      if (loop) return;
      const abort = new AbortController();
      stopping = abort;
      loop = (async () => {
        let lastPrune = -Infinity;
        while (!abort.signal.aborted) {
          if (clock.now() - lastPrune >= pruneMs) {
            lastPrune = clock.now();
            await prune().catch((error: unknown) => log.warn({ err: describeError(error) }, 'pruning the delivery history failed'));
          }
          await refreshPeople();
          await clock.sleep(refreshMs, abort.signal).catch(() => {});
        }
      })();
    },
    async stop() {
      if (!loop) return;
      stopping?.abort(new Error('stopping'));
      await loop;
      await refreshing;
      loop = undefined;
    },
  };
}
