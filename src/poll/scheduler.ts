import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { describeError } from '../errors.js';
import type { Component } from '../lifecycle.js';
import { counter } from '../metrics.js';
import { nodeCronFactory, type CronFactory, type CronTimer } from './cron.js';

/**
 * Runs jobs (the poll, the roster export) on cron schedules, and once at start-up when asked.
 * No overlap: a tick that arrives while the job's previous run is still going is skipped and logged
 * (our own guard, whatever the timer library does). Stop stops the timers, aborts the runs through
 * their signal and waits for them, bounded.
 */
export interface ScheduledJob {
  name: string;
  schedule: string;
  timezone: string;
  runOnStart: boolean;
  run(trigger: string, signal: AbortSignal): Promise<unknown>;
  /** Another reason to skip a tick: the same work already under way for another caller. */
  isBusy?(): boolean;
}

export type TickDecision = 'run' | 'skip-running' | 'skip-busy' | 'skip-stopped';

/** The scheduler's one decision (STYLE 5). */
export function decideTick(state: { stopped: boolean; running: boolean; busy: boolean }): TickDecision {
  if (state.stopped) return 'skip-stopped';
  if (state.running) return 'skip-running';
  if (state.busy) return 'skip-busy';
  return 'run';
}

export interface Scheduler extends Component {
  /** What a tick does; the timers call it, tests and start-up too. */
  tick(name: string, trigger?: string): TickDecision;
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
}

export function createScheduler(options: SchedulerOptions): Scheduler {
  const { jobs, log } = options;
  const cron = options.cron ?? nodeCronFactory;
  const skipped = counter(options.metrics, 'schoolbridge_schedule_skipped_total', 'Scheduled ticks skipped because the job was still running', ['job', 'reason']);
  const running = new Map<string, Promise<void>>();
  let timers: { job: ScheduledJob; timer: CronTimer }[] = [];
  let controller = new AbortController();
  let stopped = true;

  const tick = (name: string, trigger = 'schedule'): TickDecision => {
    const job = jobs.find((candidate) => candidate.name === name);
    if (!job) throw new Error(`no scheduled job ${name}`);
    const decision = decideTick({ stopped, running: running.has(name), busy: job.isBusy?.() ?? false });
    if (decision !== 'run') {
      if (decision !== 'skip-stopped') skipped.inc({ job: name, reason: decision });
      log.warn({ job: name, trigger, decision }, `${name} tick skipped: ${decision === 'skip-running' ? 'the previous run is still going' : decision === 'skip-busy' ? 'the same work is already under way' : 'stopped'}`);
      return decision;
    }
    const run = job
      .run(trigger, controller.signal)
      .then(
        () => undefined,
        (error: unknown) => log.error({ job: name, trigger, err: error }, `${name} run failed: ${describeError(error)}`),
      )
      .finally(() => running.delete(name));
    running.set(name, run);
    return decision;
  };

  return {
    name: 'scheduler',
    async start() {
      if (!stopped) return;
      stopped = false;
      controller = new AbortController();
      timers = jobs.map((job) => ({ job, timer: cron({ name: job.name, expression: job.schedule, timezone: job.timezone }, () => tick(job.name), log) }));
      for (const { timer } of timers) timer.start();
      for (const job of jobs) if (job.runOnStart) tick(job.name, 'start-up');
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

  function nextRuns(): Record<string, string | null> {
    return Object.fromEntries(timers.map(({ job, timer }) => [job.name, timer.nextRun()?.toISOString() ?? null]));
  }
}
