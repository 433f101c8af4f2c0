import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TickClaimOutcome } from '../store/index.js';
import { createMetricsRegistry } from '../metrics.js';
import type { CronFactory, CronSpec } from './cron.js';
import { createScheduler, decideTick, retryBeforeNextTick, type ScheduledJob, type Scheduler } from './scheduler.js';

const log = pino({ level: 'silent' });

/** A cron twin: ticks fire when the test says so. */
function manualCron() {
  const timers = new Map<string, { spec: CronSpec; fire: (slot: Date) => void; started: boolean; stopped: boolean }>();
  const factory: CronFactory = (spec, onTick) => {
    const entry = { spec, fire: onTick, started: false, stopped: false };
    timers.set(spec.name, entry);
    return {
      start: () => void (entry.started = true),
      stop: () => void (entry.stopped = true),
      nextRun: () => (entry.stopped ? null : new Date(Date.UTC(2026, 10, 22, 2))),
      matches: () => false,
    };
  };
  return { factory, timers, fire: (name: string, slot = new Date(Date.UTC(2026, 10, 22, 1))) => timers.get(name)?.fire(slot) };
}

/** A job whose runs the test finishes by hand. */
function heldJob(name: string, patch: Partial<ScheduledJob> = {}) {
  const runs: { trigger: string; signal: AbortSignal; finish: () => void }[] = [];
  const job: ScheduledJob = {
    name, schedule: '* * * * *', timezone: 'Europe/Warsaw', runOnStart: false,
    run: (trigger, signal) =>
      new Promise<void>((resolve, reject) => {
        runs.push({ trigger, signal, finish: resolve });
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      }),
    ...patch,
  };
  return { job, runs };
}

let scheduler: Scheduler | undefined;
afterEach(async () => {
  await scheduler?.stop();
  scheduler = undefined;
});

describe('decideTick', () => {
  it.each([
    [{ stopped: false, running: false, busy: false }, 'run'],
    [{ stopped: false, running: true, busy: false }, 'skip-running'],
    [{ stopped: false, running: false, busy: true }, 'skip-busy'],
    [{ stopped: false, running: false, busy: false, held: true }, 'skip-held'],
    [{ stopped: false, running: true, busy: false, held: true }, 'skip-running'],
    [{ stopped: true, running: false, busy: false }, 'skip-stopped'],
    [{ stopped: true, running: true, busy: true }, 'skip-stopped'],
  ] as const)('%j → %s', (state, decision) => {
    expect(decideTick(state)).toBe(decision);
  });
});

describe('scheduler', () => {
  it('skips a tick while the previous run is going, counts it, runs again after', async () => {
    const cron = manualCron();
    const poll = heldJob('poll');
    const metrics = createMetricsRegistry();
    scheduler = createScheduler({ jobs: [poll.job], log, metrics, cron: cron.factory });
    await scheduler.start();
    expect(cron.timers.get('poll')).toMatchObject({ started: true, spec: { expression: '* * * * *', timezone: 'Europe/Warsaw' } });
    cron.fire('poll');
    cron.fire('poll');
    expect(poll.runs).toHaveLength(1);
    expect(await metrics.metrics()).toContain('schoolbridge_schedule_skipped_total{job="poll",reason="skip-running"} 1');
    poll.runs[0]?.finish();
    await scheduler.whenIdle();
    cron.fire('poll');
    expect(poll.runs.map((r) => r.trigger)).toEqual(['schedule', 'schedule']);
  });

  it('runs a failed run again after its waits until one succeeds, unless the next tick comes first', async () => {
    const cron = manualCron();
    const NEXT_TICK = Date.UTC(2026, 10, 22, 2);
    let now = NEXT_TICK - 3_600_000;
    const outcomes = ['failed', 'failed', 'ok'];
    const triggers: string[] = [];
    const job: ScheduledJob = {
      name: 'export', schedule: '0 2 * * *', timezone: 'Europe/Warsaw', runOnStart: false,
      run: async (trigger) => {
        triggers.push(trigger);
        return { outcome: outcomes.shift() ?? 'ok' };
      },
      retry: { failed: (result) => (result as { outcome: string }).outcome === 'failed', delaysMs: [20, 40] },
    };
    scheduler = createScheduler({ jobs: [job], log, metrics: createMetricsRegistry(), cron: cron.factory, now: () => now });
    await scheduler.start();
    cron.fire('export');
    await expect.poll(() => triggers).toEqual(['schedule', 'retry', 'retry']);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(triggers).toHaveLength(3);
    // A failure a wait before the next tick is left to that tick.
    outcomes.push('failed');
    now = NEXT_TICK - 10;
    cron.fire('export');
    await scheduler.whenIdle();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(triggers).toEqual(['schedule', 'retry', 'retry', 'schedule']);
  });

  it('decides a retry comes before the next tick only when it does', () => {
    expect(retryBeforeNextTick(1000, 500, 2000)).toBe(true);
    expect(retryBeforeNextTick(1000, 1000, 2000)).toBe(false);
    expect(retryBeforeNextTick(1000, 5000, undefined)).toBe(true);
  });

  it('skips when the work is busy for another caller, with an info line: that cycle does the work', async () => {
    const cron = manualCron();
    const poll = heldJob('poll', { isBusy: () => true });
    const lines: { level: number; msg: string }[] = [];
    const captured = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line) as { level: number; msg: string }) });
    scheduler = createScheduler({ jobs: [poll.job], log: captured, metrics: createMetricsRegistry(), cron: cron.factory });
    await scheduler.start();
    expect(scheduler.tick('poll')).toBe('skip-busy');
    expect(poll.runs).toHaveLength(0);
    // The nightly export's own poll and a poll tick of the same minute meet every night.
    expect(lines.filter((line) => line.msg.startsWith('poll tick skipped'))).toEqual([
      expect.objectContaining({ level: 30, msg: 'poll tick skipped: a cycle is already running (a roster export\'s, or one asked for by hand)' }),
    ]);
  });

  it('skips ticks while the job is held (the upstream asked to wait), counts them, and runs once it is not', async () => {
    const cron = manualCron();
    let held: string | undefined = '2026-11-30T13:00:00.000Z';
    const poll = heldJob('poll', { heldUntil: () => held });
    const metrics = createMetricsRegistry();
    scheduler = createScheduler({ jobs: [poll.job], log, metrics, cron: cron.factory });
    await scheduler.start();
    cron.fire('poll');
    expect(scheduler.tick('poll')).toBe('skip-held');
    expect(poll.runs).toHaveLength(0);
    expect(await metrics.metrics()).toContain('schoolbridge_schedule_skipped_total{job="poll",reason="skip-held"} 2');
    held = undefined;
    cron.fire('poll');
    expect(poll.runs).toHaveLength(1);
  });

  it('runs a tick skipped for a hold when the hold ends, if that is before the next tick', async () => {
    const cron = manualCron();
    const nextTick = Date.UTC(2026, 10, 22, 2);
    // The upstream asked to wait until 3 ms after the tick: the next tick is a minute away.
    let clock = nextTick - 60_000;
    let held: string | undefined = new Date(clock + 3).toISOString();
    const poll = heldJob('poll', { heldUntil: () => held });
    const claims: number[] = [];
    scheduler = createScheduler({ jobs: [poll.job], log, metrics: createMetricsRegistry(), cron: cron.factory, now: () => clock, claimTick: async (_job, slot) => (claims.push(slot), 'mine') });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      await scheduler.start();
      cron.fire('poll', new Date(clock));
      expect(poll.runs).toHaveLength(0);
      await vi.advanceTimersByTimeAsync(2);
      expect(poll.runs).toHaveLength(0);
      clock += 4;
      held = undefined;
      await vi.advanceTimersByTimeAsync(2);
      expect(poll.runs.map((r) => r.trigger)).toEqual(['schedule']);
      // The same tick's slot is claimed: among replicas, one that was not held may have run it.
      expect(claims).toEqual([nextTick - 60_000]);
      poll.runs[0]!.finish();
      await scheduler.whenIdle();
      // A hold that ends after the next tick: that tick runs, not this one.
      clock = nextTick - 1_000;
      held = new Date(nextTick + 5).toISOString();
      cron.fire('poll', new Date(clock));
      await vi.advanceTimersByTimeAsync(10_000);
      expect(poll.runs).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('runs start-up jobs in order, reports next runs, and stop aborts runs and timers', async () => {
    const cron = manualCron();
    const poll = heldJob('poll', { runOnStart: true });
    const roster = heldJob('export', { runOnStart: true });
    scheduler = createScheduler({ jobs: [poll.job, roster.job], log, metrics: createMetricsRegistry(), cron: cron.factory });
    await scheduler.start();
    expect(poll.runs.map((r) => r.trigger)).toEqual(['start-up']);
    expect(roster.runs.map((r) => r.trigger)).toEqual(['start-up']);
    expect(scheduler.nextRuns()).toEqual({ poll: '2026-11-22T02:00:00.000Z', export: '2026-11-22T02:00:00.000Z' });
    await scheduler.stop();
    expect(poll.runs[0]?.signal.aborted).toBe(true);
    expect(cron.timers.get('poll')?.stopped).toBe(true);
    expect(scheduler.tick('poll')).toBe('skip-stopped');
    await scheduler.stop(); // twice is harmless
  });

  it('runs each tick on the one replica whose claim of its slot wins, and one start-up run between them', async () => {
    // The store's side of it: the last slot claimed per job moves only forward.
    const last = new Map<string, number>();
    const claimTick = async (job: string, slot: number): Promise<TickClaimOutcome> => {
      if ((last.get(job) ?? -Infinity) >= slot) return 'settled';
      last.set(job, slot);
      return 'mine';
    };
    const replicas = [manualCron(), manualCron(), manualCron()].map((cron) => {
      const runs: string[] = [];
      const job: ScheduledJob = { name: 'poll', schedule: '* * * * *', timezone: 'Europe/Warsaw', runOnStart: true, run: async (trigger) => void runs.push(trigger) };
      return { cron, job, runs, metrics: createMetricsRegistry() };
    });
    const schedulers = replicas.map(({ cron, job, metrics }) => createScheduler({ jobs: [job], log, metrics, cron: cron.factory, claimTick }));
    try {
      const runs = () => replicas.flatMap((r) => r.runs);
      const settle = () => Promise.all(schedulers.map((one) => one.whenIdle()));
      for (const one of schedulers) await one.start();
      await settle();
      expect(runs()).toEqual(['start-up']);
      for (let minute = 0; minute < 5; minute++) {
        const slot = new Date(Date.UTC(2026, 10, 22, 2, minute));
        for (const { cron } of replicas) cron.fire('poll', slot);
        await settle();
        expect(runs()).toHaveLength(2 + minute);
      }
      const skipped = await Promise.all(replicas.map(async (r) => (await r.metrics.metrics()).match(/reason="other-replica"} (\d+)/)?.[1] ?? '0'));
      expect(skipped.map(Number).reduce((a, b) => a + b)).toBe(2 + 2 * 5);
    } finally {
      for (const one of schedulers) await one.stop();
    }
  });

  it('claims a start-up run once more when another replica held its slot, and runs it if the store now grants it', async () => {
    const cron = manualCron();
    const poll = heldJob('poll', { runOnStart: true });
    // The replica that claimed the slot is found dead by the second claim.
    const answers: TickClaimOutcome[] = ['taken', 'mine'];
    const claims: number[] = [];
    const finished: number[] = [];
    scheduler = createScheduler({
      jobs: [poll.job], log, metrics: createMetricsRegistry(), cron: cron.factory, reclaimMs: 10,
      claimTick: async (_job, slot) => {
        claims.push(slot);
        return answers.shift() ?? 'taken';
      },
      finishTick: async (_job, slot) => void finished.push(slot),
    });
    await scheduler.start();
    await expect.poll(() => poll.runs.map((r) => r.trigger)).toEqual(['start-up']);
    expect(claims).toEqual([Date.UTC(2026, 10, 22, 2) - 1, Date.UTC(2026, 10, 22, 2) - 1]);
    poll.runs[0]!.finish();
    await scheduler.whenIdle();
    // A start-up run's end is not noted: after a restart of every replica, the next start-up runs again.
    expect(finished).toEqual([]);
  });

  it('claims a start-up run once more only, however long the replica that holds it lives', async () => {
    const cron = manualCron();
    const poll = heldJob('poll', { runOnStart: true });
    let claims = 0;
    scheduler = createScheduler({
      jobs: [poll.job], log, metrics: createMetricsRegistry(), cron: cron.factory, reclaimMs: 5,
      claimTick: async () => {
        claims += 1;
        return 'taken';
      },
    });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      await scheduler.start();
      await vi.advanceTimersByTimeAsync(100);
    } finally {
      vi.useRealTimers();
    }
    expect(claims).toBe(2);
    expect(poll.runs).toHaveLength(0);
  });

  it('runs a scheduled tick whose replica died before its run ended, and notes the end of every run it makes', async () => {
    const cron = manualCron();
    const poll = heldJob('poll');
    const slot = new Date(Date.UTC(2026, 10, 22, 2, 15));
    // Another replica won the claim and lives on a while, then dies mid-run: the store grants the slot.
    const answers: TickClaimOutcome[] = ['taken', 'taken', 'taken', 'mine'];
    const claims: number[] = [];
    const finished: [string, number][] = [];
    const metrics = createMetricsRegistry();
    scheduler = createScheduler({
      jobs: [poll.job], log, metrics, cron: cron.factory, reclaimMs: 5,
      claimTick: async (_job, at) => {
        claims.push(at);
        return answers.shift() ?? 'settled';
      },
      finishTick: async (job, at) => void finished.push([job, at]),
    });
    await scheduler.start();
    cron.fire('poll', slot);
    await expect.poll(() => poll.runs.map((r) => r.trigger)).toEqual(['schedule']);
    expect(claims).toEqual([slot.getTime(), slot.getTime(), slot.getTime(), slot.getTime()]);
    expect(finished).toEqual([]);
    poll.runs[0]!.finish();
    await expect.poll(() => finished).toEqual([['poll', slot.getTime()]]);
    // The lost claim is counted once, not once per claim again.
    expect(await metrics.metrics()).toContain('schoolbridge_schedule_skipped_total{job="poll",reason="other-replica"} 1');
  });

  it('stops claiming a scheduled tick again once its run ended on the replica that holds it', async () => {
    const cron = manualCron();
    const poll = heldJob('poll');
    const answers: TickClaimOutcome[] = ['taken', 'taken', 'settled'];
    let claims = 0;
    scheduler = createScheduler({
      jobs: [poll.job], log, metrics: createMetricsRegistry(), cron: cron.factory, reclaimMs: 5,
      claimTick: async () => {
        claims += 1;
        return answers.shift() ?? 'mine';
      },
    });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      await scheduler.start();
      cron.fire('poll');
      await vi.advanceTimersByTimeAsync(100);
    } finally {
      vi.useRealTimers();
    }
    expect(claims).toBe(3);
    expect(poll.runs).toHaveLength(0);
  });

  it('notes the end of a run that threw', async () => {
    const cron = manualCron();
    const finished: number[] = [];
    const poll: ScheduledJob = { name: 'poll', schedule: '* * * * *', timezone: 'UTC', runOnStart: false, run: () => Promise.reject(new Error('a bug')) };
    scheduler = createScheduler({
      jobs: [poll], log, metrics: createMetricsRegistry(), cron: cron.factory, reclaimMs: 5,
      claimTick: async () => 'mine',
      finishTick: async (_job, at) => void finished.push(at),
    });
    await scheduler.start();
    cron.fire('poll');
    await scheduler.whenIdle();
    expect(finished).toEqual([Date.UTC(2026, 10, 22, 1)]);
  });

  it('does not note the end of a run that stop cut short: another replica runs that tick', async () => {
    const cron = manualCron();
    const poll = heldJob('poll');
    const finished: number[] = [];
    scheduler = createScheduler({
      jobs: [poll.job], log, metrics: createMetricsRegistry(), cron: cron.factory, reclaimMs: 5,
      claimTick: async () => 'mine',
      finishTick: async (_job, at) => void finished.push(at),
    });
    await scheduler.start();
    cron.fire('poll');
    await expect.poll(() => poll.runs).toHaveLength(1);
    await scheduler.stop();
    expect(finished).toEqual([]);
  });

  it('skips a tick it could not claim, and says so', async () => {
    const cron = manualCron();
    const poll = heldJob('poll');
    const metrics = createMetricsRegistry();
    scheduler = createScheduler({ jobs: [poll.job], log, metrics, cron: cron.factory, claimTick: () => Promise.reject(new Error('the store is down')) });
    await scheduler.start();
    cron.fire('poll');
    await scheduler.whenIdle();
    expect(poll.runs).toHaveLength(0);
    expect(await metrics.metrics()).toContain('schoolbridge_schedule_skipped_total{job="poll",reason="claim-failed"} 1');
  });
});
