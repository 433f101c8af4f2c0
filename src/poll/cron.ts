import { createTask, type Logger as CronLogger } from 'node-cron';
import type { Logger } from 'pino';

/**
 * The timer behind a schedule: node-cron 4 in production, a hand-driven twin in tests. Only the
 * timing lives here; what happens on a tick (and whether a tick is skipped) is the scheduler's.
 */
export interface CronTimer {
  start(): void;
  /** Stops and forgets the timer; harmless twice. */
  stop(): void;
  /** The next tick, or null when stopped. */
  nextRun(): Date | null;
  /** Whether the expression fires at this instant (in the schedule's timezone). */
  matches(date: Date): boolean;
}

export interface CronSpec {
  name: string;
  /** node-cron syntax: 5 fields, or 6 with seconds first. */
  expression: string;
  /** IANA timezone the expression is read in. */
  timezone: string;
}

/** `slot`: the time the tick is for by the schedule (not when the timer happened to fire). */
export type CronFactory = (spec: CronSpec, onTick: (slot: Date) => void, log: Logger) => CronTimer;

export const nodeCronFactory: CronFactory = (spec, onTick, log) => {
  const logger: CronLogger = {
    info: (message) => log.debug({ job: spec.name }, message),
    warn: (message) => log.warn({ job: spec.name }, message),
    error: (message, err) => log.error({ job: spec.name, err: err ?? message }, 'node-cron error'),
    debug: (message) => log.debug({ job: spec.name }, String(message)),
  };
  // The callback only starts the work and returns: overlap is decided by the scheduler, not the library.
  const task = createTask(spec.expression, (context) => onTick(context.date), { name: `schoolbridge-${spec.name}`, timezone: spec.timezone, logger });
  let destroyed = false;
  return {
    start: () => void task.start(),
    stop() {
      if (destroyed) return;
      destroyed = true;
      void task.destroy();
    },
    nextRun: () => (destroyed ? null : task.getNextRun()),
    matches: (date) => task.match(date),
  };
};
