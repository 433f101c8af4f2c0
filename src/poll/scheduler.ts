import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { describeError } from '../errors.js';
import type { Component } from '../lifecycle.js';
import { counter } from '../metrics.js';
import type { TickClaimOutcome } from '../store/index.js';
import { waitText } from '../wait-text.js';
import { nodeCronFactory, type CronFactory, type CronTimer } from './cron.js';

/**
 * Runs jobs (the poll, the roster export) on cron schedules, and once at start-up when asked.
 * No overlap: a tick that arrives while the job's previous run is still going is skipped and logged
 * (our own guard, whatever the timer library does). Among replicas each tick runs once: a tick is
 * claimed in the store by the time the schedule gave it (its slot), and only the replica whose claim
 * wins runs it, then notes that its run ended. A replica whose claim lost claims again every
 * `reclaimMs` while the run has not ended, which the store grants only once the replica that won
 * is no longer live: a tick whose replica was killed mid-run is run by another. A start-up run
 * claims the slot just before the next tick, so replicas starting together run one start-up run
 * between them; its end is not noted, and one that lost that claim claims once more `reclaimMs`
 * later: a replica restarted after a kill -9 (or after all stopped) runs a start-up run again.
 * Stop stops the timers, aborts the runs through their signal and waits for them, bounded.
 */
export interface ScheduledJob {
  name: string;
  schedule: string;
  timezone: string;
  runOnStart: boolean;
  run(trigger: string, signal: AbortSignal): Promise<unknown>;
  /** Another reason to skip a tick: the same work already under way for another caller. */
  isBusy?(): boolean;
  /** Until when ticks wait (ISO 8601), when the job was asked to (an upstream's Retry-After); else undefined. */
  heldUntil?(): string | undefined;
  /**
   * A run that failed is run again after these waits (the last one repeated), on this replica,
   * until one succeeds or the schedule's next tick would come first: a daily job (the roster
   * export) whose run met an outage would otherwise wait a day.
   */
  retry?: { failed(result: unknown): boolean; delaysMs: readonly number[] };
}

/** Whether a failed run is tried again after `delayMs`, or left to the schedule's next tick (sooner, or as soon). */
export function retryBeforeNextTick(now: number, delayMs: number, nextTick: number | undefined): boolean {
  return nextTick === undefined || now + delayMs < nextTick;
}

export type TickDecision = 'run' | 'skip-running' | 'skip-busy' | 'skip-held' | 'skip-stopped';

/** The scheduler's one decision. */
export function decideTick(state: { stopped: boolean; running: boolean; busy: boolean; held?: boolean }): TickDecision {
  if (state.stopped) return 'skip-stopped';
  if (state.running) return 'skip-running';
  if (state.busy) return 'skip-busy';
  if (state.held) return 'skip-held';
  return 'run';
}

export interface Scheduler extends Component {
  /**
   * What a tick does; the timers call it, tests and start-up too. With a `slot` (epoch ms) the run
   * is claimed first, and skipped when another replica has the slot.
   */
  tick(name: string, trigger?: string, slot?: number): TickDecision;
  /** Next run per job, ISO 8601 (null when stopped). */
  nextRuns(): Record<string, string | null>;
  /** Resolves when no job is running. */
  whenIdle(): Promise<void>;
}

export interface SchedulerOptions {
  jobs: readonly ScheduledJob[];
  log: Logger;
  metrics: Registry;
  cron?: CronFactory;
  stopWaitMs?: number;
  /** Claims a job's tick among the replicas (RoleStore.claimTick). Default: every tick is this replica's. */
  claimTick?: (job: string, slot: number) => Promise<TickClaimOutcome>;
  /** Notes that this replica's run of a scheduled tick ended (RoleStore.finishTick). */
  finishTick?: (job: string, slot: number) => Promise<void>;
  /** How long after a lost claim it claims again (longer than a replica takes to be found dead); never when absent. */
  reclaimMs?: number;
  now?: () => number;
}

export function createScheduler(options: SchedulerOptions): Scheduler {
  const { jobs, log } = options;
  const cron = options.cron ?? nodeCronFactory;
  const skipped = counter(options.metrics, 'schoolbridge_schedule_skipped_total', 'Scheduled ticks skipped because the job was still running', ['job', 'reason']);
  const running = new Map<string, Promise<void>>();
  let timers: { job: ScheduledJob; timer: CronTimer }[] = [];
  let controller = new AbortController();
  let stopped = true;
  const now = options.now ?? Date.now;
  /** Failed runs in a row per job, for its retry waits. */
  const failures = new Map<string, number>();

  /**
   * Whether this replica runs the tick at `slot`: a claim that fails (the store is down) is a skip.
   * `again`: a claim repeated after one lost, counted and logged only when it wins.
   */
  const claimed = async (name: string, trigger: string, slot: number, again: boolean): Promise<TickClaimOutcome | 'failed'> => {
    const at = new Date(slot).toISOString();
    try {
      const outcome = await options.claimTick!(name, slot);
      if (outcome === 'mine' && again) log.info({ job: name, trigger, slot: at }, `${name} tick of ${at} runs here: the replica that claimed it is gone before its run ended`);
      if (outcome !== 'mine' && !again) {
        skipped.inc({ job: name, reason: 'other-replica' });
        log.debug({ job: name, trigger, slot: at }, `${name} tick runs on another replica`);
      }
      return outcome;
    } catch (error) {
      skipped.inc({ job: name, reason: 'claim-failed' });
      log.warn({ job: name, trigger, err: describeError(error) }, `${name} tick skipped: it could not be claimed in the store`);
      return 'failed';
    }
  };

  const tick = (name: string, trigger = 'schedule', slot?: number): TickDecision => runTick(name, trigger, slot);

  /**
   * A tick. With a slot, a claim another live replica holds is claimed again after `reclaimMs`:
   * while its run has not ended (`taken`), or once only for a start-up run (`once`), whose end is
   * never noted.
   */
  const runTick = (name: string, trigger: string, slot: number | undefined, reclaim?: { once: boolean; again: boolean }): TickDecision => {
    const job = jobs.find((candidate) => candidate.name === name);
    if (!job) throw new Error(`no scheduled job ${name}`);
    const heldUntil = job.heldUntil?.();
    const decision = decideTick({ stopped, running: running.has(name), busy: job.isBusy?.() ?? false, held: heldUntil !== undefined });
    if (decision !== 'run') {
      if (decision !== 'skip-stopped') skipped.inc({ job: name, reason: decision });
      // A wait asked for, or a cycle of another caller's doing the same work, is no trouble: an info
      // line. A tick that finds its own previous run still going says the schedule is too tight.
      if (decision === 'skip-held') {
        const then = runWhenHeldEnds(job, trigger, slot, Date.parse(heldUntil!)) ? '; it runs then' : '';
        log.info({ job: name, trigger, decision, heldUntil }, `${name} tick skipped: the upstream asked to wait until ${heldUntil}${then}`);
      } else if (decision === 'skip-busy') log.info({ job: name, trigger, decision }, `${name} tick skipped: a cycle is already running (a roster export's, or one asked for by hand)`);
      else log.warn({ job: name, trigger, decision }, `${name} tick skipped: ${decision === 'skip-running' ? 'the previous run is still going' : 'stopped'}`);
      return decision;
    }
    const signal = controller.signal;
    const started = slot === undefined || !options.claimTick
      ? job.run(trigger, signal)
      : claimed(name, trigger, slot, reclaim?.again ?? false).then(async (claim) => {
        if (claim === 'mine' && !signal.aborted) {
          try {
            return await job.run(trigger, signal);
          } finally {
            // A run that threw ended too: the others are not to run its tick again.
            if (!reclaim?.once) await finished(name, slot, signal);
          }
        }
        if (claim === 'taken' && !(reclaim?.once && reclaim.again)) reclaimLater(job, trigger, slot, reclaim?.once ?? false, signal);
        return undefined;
      });
    const run = started
      .then(
        (result) => {
          if (!job.retry) return;
          if (result !== undefined && job.retry.failed(result)) retryLater(job, signal);
          else if (result !== undefined) failures.delete(name);
        },
        (error: unknown) => log.error({ job: name, trigger, err: error }, `${name} run failed: ${describeError(error)}`),
      )
      .finally(() => running.delete(name));
    running.set(name, run);
    return decision;
  };

  /**
   * Runs a tick skipped for a hold when the hold ends, if that comes before the schedule's next
   * tick: a Retry-After as long as the schedule's period, counted from the end of the cycle it
   * answered, ends just after the next tick, and would cost a whole period. True when it will.
   */
  const runWhenHeldEnds = (job: ScheduledJob, trigger: string, slot: number | undefined, until: number): boolean => {
    const signal = controller.signal;
    const delay = Math.max(0, until - now()) + 1;
    const next = timers.find((t) => t.job === job)?.timer.nextRun()?.getTime();
    if (signal.aborted || Number.isNaN(until) || next === undefined || !retryBeforeNextTick(now(), delay, next)) return false;
    const later = setTimeout(() => signal.aborted || runTick(job.name, trigger, slot), delay);
    later.unref();
    signal.addEventListener('abort', () => clearTimeout(later), { once: true });
    return true;
  };

  /** Notes the end of a run of a tick, unless the run was stopped: another replica runs the tick then. */
  const finished = async (name: string, slot: number, signal: AbortSignal): Promise<void> => {
    if (signal.aborted || !options.finishTick) return;
    try {
      await options.finishTick(name, slot);
    } catch (error) {
      log.warn({ job: name, err: describeError(error) }, `${name} run ended but could not be noted in the store: another replica may run its tick again if this one dies`);
    }
  };

  /** Claims a tick again later (a replica holding it may die before its run ends); `once` for a start-up run. */
  const reclaimLater = (job: ScheduledJob, trigger: string, slot: number, once: boolean, signal: AbortSignal): void => {
    if (options.reclaimMs === undefined || signal.aborted) return;
    const again = setTimeout(() => {
      if (signal.aborted) return;
      // This replica is at the job already (the next tick's run): its tick is that one's.
      if (running.has(job.name)) return;
      runTick(job.name, trigger, slot, { once, again: true });
    }, options.reclaimMs);
    again.unref();
    signal.addEventListener('abort', () => clearTimeout(again), { once: true });
  };

  /** Runs a job whose run failed again after its next wait, unless its schedule comes first. */
  const retryLater = (job: ScheduledJob, signal: AbortSignal): void => {
    const failed = (failures.get(job.name) ?? 0) + 1;
    const delays = job.retry!.delaysMs;
    const delay = delays[Math.min(failed, delays.length) - 1]!;
    const next = timers.find((t) => t.job === job)?.timer.nextRun()?.getTime();
    if (signal.aborted || !retryBeforeNextTick(now(), delay, next)) {
      failures.delete(job.name);
      return;
    }
    failures.set(job.name, failed);
    log.info({ job: job.name, failed, retryInMs: delay }, `${job.name} failed; it runs again in ${waitText(delay)}`);
    const retry = setTimeout(() => signal.aborted || runTick(job.name, 'retry', undefined), delay);
    retry.unref();
    signal.addEventListener('abort', () => clearTimeout(retry), { once: true });
  };

  return {
    name: 'scheduler',
    async start() {
      if (!stopped) return;
      stopped = false;
      controller = new AbortController();
      timers = jobs.map((job) => ({ job, timer: cron({ name: job.name, expression: job.schedule, timezone: job.timezone }, (slot) => tick(job.name, 'schedule', slot.getTime()), log) }));
      for (const { timer } of timers) timer.start();
      for (const { job, timer } of timers) {
        const next = timer.nextRun();
        if (job.runOnStart) startUp(job.name, next ? next.getTime() - 1 : undefined);
      }
      log.info({ next: nextRuns() }, 'schedules started');
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const { timer } of timers) timer.stop();
      controller.abort(new Error('the scheduler is stopping'));
      let timeout: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(running.values()),
        new Promise<void>((resolve) => {
          timeout = setTimeout(resolve, options.stopWaitMs ?? 5_000);
        }),
      ]);
      clearTimeout(timeout);
    },
    tick,
    nextRuns,
    async whenIdle() {
      while (running.size > 0) await Promise.all(running.values());
    },
  };

  /** The start-up run, claimed once more `reclaimMs` later if another replica held its slot. */
  function startUp(name: string, slot: number | undefined): void {
    runTick(name, 'start-up', slot, { once: true, again: false });
  }

  function nextRuns(): Record<string, string | null> {
    return Object.fromEntries(timers.map(({ job, timer }) => [job.name, timer.nextRun()?.toISOString() ?? null]));
  }
}
