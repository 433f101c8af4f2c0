import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { systemClock, type Clock } from '../clock.js';
import { describeError, isBridgeError } from '../errors.js';
import type { Component } from '../lifecycle.js';
import type { ReadinessState } from '../readiness.js';
import type { HistoryStore, Run, SnapshotStore, StateStore } from '../store/index.js';
import { streamsToPoll, type PolledStreamName } from '../streams/index.js';
import { createListWorker, type ListWorker } from '../upstream/list/index.js';
import { CycleAbort, emptySummary, runPollCycle, type CycleDeps, type CyclePhases, type CycleResult } from './cycle.js';
import { createPollMetrics, type PollMetrics } from './poll-metrics.js';
import type { ListSource, OutboxPort } from './ports.js';
import { cycleLine, refusedForAnother, summaries } from './format.js';
import { waitText } from '../wait-text.js';

export interface PollerOptions {
  store: { snapshot: SnapshotStore; state: StateStore; history?: Pick<HistoryStore, 'recordRun'> };
  upstream: ListSource;
  outbox: OutboxPort;
  poll: { initial: 'emit' | 'baseline'; maxDeleteRatio: number };
  log: Logger;
  metrics: Registry;
  clock?: Clock;
  /** Staged rows applied per transaction (default 100: a webhook's commit may wait for one such transaction). */
  applyChunk?: number;
  /** Longest stretch of synchronous diff work between yields to the event loop (default 4 ms). */
  budgetMs?: number;
  /** The list worker (default: a new one); the poller stops it when it stops. */
  lists?: ListWorker;
  /** The streams to poll (default: those polled whatever the config says, src/streams/). */
  streams?: readonly PolledStreamName[];
  /** This replica's id, recorded with each cycle's outcome for every replica's status page. */
  replica?: string;
  /**
   * Start the list worker's threads with the poller (the daemon) rather than at the first read (a
   * one-shot command that may never poll). A scheduled cycle then never waits for them to load
   * (~300 ms), and the start-up cycle's request to the upstream overlaps their loading.
   */
  warmWorkers?: boolean;
  /** Log each cycle's result (default): the daemon's log. A one-shot command prints it itself. */
  logResults?: boolean;
}

export interface RunCycleOptions {
  /** Diff and report, commit nothing. */
  dryRun?: boolean;
  /** Who asked: schedule, start-up, manual, export (logs and results). */
  trigger?: string;
  /** Aborts this cycle (between records and chunks; whole chunks stay committed). */
  signal?: AbortSignal;
}

/** Poll cycles one at a time; runCycle while one runs waits for it, then runs a fresh one. */
export interface Poller extends Component {
  runCycle(options?: RunCycleOptions): Promise<CycleResult>;
  busy(): boolean;
  /** The last cycle that was not a dry run. */
  lastResult(): CycleResult | undefined;
  /** Epoch ms of the end of the last successful cycle. */
  lastSuccessAt(): number | undefined;
  /** For /readyz: not ready after an aborted cycle (here, or a later one on another replica: `recorded`), until a later one succeeds. */
  readiness(): ReadinessState;
  /**
   * The last cycle any replica ran, as the store has it (LAST_CYCLE_KEY), when it is later than this
   * replica's last: one that succeeded ends what a failure said, one that aborted says it here too.
   */
  recorded(cycle: LastCycle): void;
  /**
   * Until when scheduled cycles wait (ISO 8601): the last cycle failed on an upstream that asked to
   * wait (Retry-After), and polling it again before then only meets the same answer. Cycles asked for
   * (sync, the admin API) still run.
   */
  heldUntil(): string | undefined;
  on(event: 'cycle', listener: (result: CycleResult) => void): () => void;
}

const STOP_WAIT_MS = 5_000;
/**
 * The longest wait an upstream's Retry-After holds scheduled polls for: one of a day (or a typo of
 * one) would leave the snapshot a day stale after the upstream recovered. A manual sync runs at once.
 */
export const MAX_HOLD_MS = 60 * 60_000;
/**
 * Failures that readiness reports through a check of their own (the upstream's, the store's), or
 * none: a cycle refused because another process runs one (`poll.busy`) or took over from it
 * (`poll.fenced`) says nothing of this replica; that cycle's outcome is what counts.
 */
const OWN_CHECKS = /^(upstream\.|store\.|poll\.(stopped|busy|fenced)$)/;

/** The state key of the last cycle any replica ran (not a dry run): what every status page shows. */
export const LAST_CYCLE_KEY = 'poll.lastCycle';

export interface LastCycle {
  startedAt: string;
  outcome: CycleResult['outcome'];
  trigger: string;
  durationMs: number;
  replica?: string;
  /** What it makes /readyz say (an abort, a failure of the poll's own): every replica says it until a later cycle succeeds. */
  notReady?: string;
}

/** What a cycle that did not succeed makes the poll's readiness say; undefined for one another check reports, or none. */
function notReadyReason(result: CycleResult): string | undefined {
  if (result.outcome === 'aborted') return `last poll cycle aborted (${result.reason}): ${result.message}`;
  if (result.outcome === 'failed' && !OWN_CHECKS.test(result.reason ?? '')) return `last poll cycle failed (${result.reason}): ${result.message}`;
  return undefined;
}

export function createPoller(options: PollerOptions): Poller {
  const clock = options.clock ?? systemClock;
  const log = options.log;
  const { snapshot, state } = options.store;
  const streams = options.streams ?? streamsToPoll();
  const metrics = createPollMetrics(options.metrics, snapshot, streams);
  const deps: CycleDeps = {
    snapshot, state, upstream: options.upstream, outbox: options.outbox, clock, log,
    initial: options.poll.initial, maxDeleteRatio: options.poll.maxDeleteRatio,
    applyChunk: options.applyChunk ?? 100, budgetMs: options.budgetMs ?? 4,
    lists: options.lists ?? createListWorker(),
    streams,
  };
  const listeners = new Set<(result: CycleResult) => void>();
  let controller = new AbortController();
  let queue: Promise<unknown> = Promise.resolve();
  let pending = 0;
  let last: CycleResult | undefined;
  let lastSuccess: number | undefined;
  let notReady: string | undefined;
  let holdUntil: number | undefined;

  const record = async (result: CycleResult): Promise<void> => {
    // A cycle refused because another process runs one did not run here: it is no cycle of this
    // replica's, so it changes neither its last cycle, nor the hold, nor the history every replica
    // reads (a roster export waiting for that cycle asks again and again).
    const ran = !result.dryRun && !refusedForAnother(result);
    if (ran) {
      observe(metrics, result);
      last = result;
      holdUntil = result.retryAfterMs !== undefined ? clock.now() + Math.min(result.retryAfterMs, MAX_HOLD_MS) : undefined;
      if (result.retryAfterMs !== undefined && result.retryAfterMs > MAX_HOLD_MS) {
        log.warn({ retryAfterMs: result.retryAfterMs, heldUntil: new Date(holdUntil!).toISOString() }, `the upstream asked to wait ${waitText(result.retryAfterMs)}; scheduled polls wait ${waitText(MAX_HOLD_MS)} at most`);
      }
      if (result.outcome === 'ok') {
        lastSuccess = clock.now();
        metrics.lastSuccess.set(lastSuccess / 1000);
        notReady = undefined;
      } else {
        notReady = notReadyReason(result) ?? notReady;
      }
    }
    if (options.logResults !== false) logResult(log, result);
    if (ran) {
      const why = notReadyReason(result);
      const lastCycle: LastCycle = {
        startedAt: result.startedAt, outcome: result.outcome, trigger: result.trigger, durationMs: result.durationMs,
        ...(options.replica ? { replica: options.replica } : {}), ...(why ? { notReady: why } : {}),
      };
      const patch = { [LAST_CYCLE_KEY]: lastCycle };
      const history = options.store.history;
      // The run (the console's history) and the last cycle (every status page) in one transaction,
      // committed before the cycle is done: a scheduled tick notes itself done only after it, so a
      // kill between the two cannot leave a cycle that ran with no row in the history.
      await (history ? history.recordRun(cycleRun(result, options.replica), patch) : state.put(patch)).catch((error: unknown) => log.debug({ err: describeError(error) }, 'the last cycle was not recorded'));
    }
    for (const listener of listeners) listener(result);
  };

  const runCycle = (opts: RunCycleOptions = {}): Promise<CycleResult> => {
    pending += 1;
    // The recording is part of the run: the next cycle, and stop(), wait for it.
    const run = queue.then(() => runOne(deps, opts, opts.signal ? AbortSignal.any([controller.signal, opts.signal]) : controller.signal, clock)).then(async (result) => {
      await record(result);
      return result;
    }).finally(() => {
      pending -= 1;
    });
    queue = run.catch(() => {});
    return run;
  };

  return {
    name: 'poller',
    async start() {
      if (controller.signal.aborted) controller = new AbortController();
      if (options.warmWorkers) deps.lists.warm(streams);
    },
    async stop() {
      controller.abort(new Error('the poller is stopping'));
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, STOP_WAIT_MS);
      });
      await Promise.race([queue, bound]);
      clearTimeout(timer);
      await deps.lists.stop();
    },
    runCycle,
    busy: () => pending > 0,
    lastResult: () => last,
    lastSuccessAt: () => lastSuccess,
    readiness: () => (notReady ? { ok: false, reason: notReady } : { ok: true }),
    recorded(cycle) {
      if (last !== undefined && !(Date.parse(cycle.startedAt) > Date.parse(last.startedAt))) return;
      if (cycle.outcome === 'ok') notReady = undefined;
      else if (cycle.notReady !== undefined) notReady = cycle.replica ? `${cycle.notReady} (on replica ${cycle.replica})` : cycle.notReady;
    },
    heldUntil: () => (holdUntil !== undefined && holdUntil > clock.now() ? new Date(holdUntil).toISOString() : undefined),
    on(_event, listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

async function runOne(deps: CycleDeps, opts: RunCycleOptions, signal: AbortSignal, clock: Clock): Promise<CycleResult> {
  const started = clock.now();
  const summary = emptySummary(deps.streams);
  const phases: Partial<CyclePhases> = {};
  const result = ({ outcome, ...fields }: Partial<CycleResult> & Pick<CycleResult, 'outcome'>): CycleResult => ({
    outcome, dryRun: opts.dryRun === true, trigger: opts.trigger ?? 'manual', startedAt: new Date(started).toISOString(),
    durationMs: clock.now() - started, phases, streams: summary, ...fields,
  });
  if (signal.aborted) return result({ outcome: 'failed', reason: 'poll.stopped', message: 'the poller is stopped' });
  try {
    const { changes } = await runPollCycle(deps, { dryRun: opts.dryRun === true, trigger: opts.trigger ?? 'manual', signal }, summary, phases);
    return result({ outcome: 'ok', ...(opts.dryRun ? { changes } : {}) });
  } catch (error) {
    if (error instanceof CycleAbort) return result({ outcome: 'aborted', reason: error.reason, stream: error.stream, message: error.message });
    if (signal.aborted) return result({ outcome: 'failed', reason: 'poll.stopped', message: 'stopped during the cycle' });
    if (isBridgeError(error)) {
      const wait = error.retryAfterMs !== undefined && error.retryAfterMs > 0 ? { retryAfterMs: error.retryAfterMs } : {};
      return result({ outcome: 'failed', reason: error.code, message: describeError(error), ...wait });
    }
    // A fault of ours (a bug, a stack overflow) fails the cycle all the same: readiness, the status
    // page and the run history show it, and the log keeps its stack.
    deps.log.error({ err: error }, 'poll cycle failed unexpectedly');
    return result({ outcome: 'failed', reason: 'poll.internal', message: describeError(error) });
  }
}

/** A cycle as the console's run history keeps it: counts per stream and op. */
export function cycleRun(result: CycleResult, replica?: string): Run {
  const counts: Run['counts'] = {};
  for (const [stream, { fetched, created, updated, deleted, baselined }] of summaries(result)) {
    counts[stream] = { fetched, created, updated, deleted, baselined };
  }
  return {
    kind: 'poll', trigger: result.trigger, startedAt: Date.parse(result.startedAt), durationMs: result.durationMs, outcome: result.outcome,
    counts, ...(result.reason ? { reason: result.reason } : {}), ...(result.message ? { message: result.message } : {}), ...(replica ? { replica } : {}),
  };
}

function observe(metrics: PollMetrics, result: CycleResult): void {
  metrics.cycles.inc({ outcome: result.outcome });
  metrics.duration.observe({ outcome: result.outcome }, result.durationMs / 1000);
  for (const [stream, summary] of summaries(result)) {
    metrics.fetched.inc({ stream }, summary.fetched);
    if (result.outcome !== 'ok') continue;
    for (const op of ['created', 'updated', 'deleted'] as const) if (summary[op] > 0) metrics.changes.inc({ stream, op }, summary[op]);
  }
  if (result.outcome === 'aborted') {
    metrics.aborted.inc({ reason: result.reason ?? 'unknown', stream: result.stream ?? 'unknown' });
  }
}

/** The message carries the counts (a terminal shows only it); the fields are for JSON logs. */
export function logResult(log: Logger, result: CycleResult): void {
  const { changes: _changes, ...fields } = result;
  if (result.outcome === 'ok') log.info(fields, cycleLine(result));
  else if (result.outcome === 'aborted') log.warn(fields, cycleLine(result));
  // A stop asked for (SIGTERM during a cycle) is not an error: the next start polls again.
  else if (result.reason === 'poll.stopped') log.info(fields, cycleLine(result));
  // Refused as another process runs a cycle (a sync beside the daemon, another replica): that one polls.
  else if (refusedForAnother(result)) log.info(fields, cycleLine(result));
  else log.error(fields, cycleLine(result));
}
