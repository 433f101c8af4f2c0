import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { Config } from '../config/index.js';
import type { Component } from '../lifecycle.js';
import type { Readiness } from '../readiness.js';
import { REPLICA_TTL_MS, type Store } from '../store/index.js';
import { streamsToPoll } from '../streams/index.js';
import type { CycleResult } from './cycle.js';
import type { PageRead } from '../page-read.js';
import { createPoller, LAST_CYCLE_KEY, type LastCycle, type Poller, type RunCycleOptions } from './poller.js';
import type { ListSource, OutboxPort } from './ports.js';
import { createRosterExporter, EXPORT_RETRY_MS, exportFailed, LAST_EXPORT_RUN_KEY, type ExportResult, type LastExportRun, type RosterExporter } from './roster-export.js';
import { createScheduler, type Scheduler } from './scheduler.js';

/** How often, at most, poll readiness looks up the last cycle the store recorded (another replica's). */
const RECORDED_LOOK_MS = 5_000;

/**
 * The poll part of the app, built in one call so app.ts stays a list of parts: the poller,
 * the roster exporter, and — in daemon mode only — the scheduler that runs both on their cron
 * schedules and once at start-up when configured. Components are returned in start order.
 */
export interface PollPart {
  readonly poller: Poller;
  readonly exporter: RosterExporter;
  readonly scheduler: Scheduler | undefined;
  readonly components: readonly Component[];
  /** What `POST /admin/sync` and `schoolbridge sync` run. */
  sync(options?: RunCycleOptions): Promise<CycleResult>;
  /** What `POST /admin/export` and `schoolbridge export roster` run. */
  exportRoster(options?: { trigger?: string }): Promise<ExportResult>;
  /** For the status page: last and next runs. */
  /** The last and next runs; `read` is how a page reads the store (status/page-read.ts), by default waiting as long as it takes. */
  status(read?: PageRead): Promise<PollStatus>;
}

export interface PollStatus {
  /** `heldUntil`: scheduled polls wait until then, as the upstream asked (Retry-After). */
  poll: { lastRunAt?: string; lastOutcome?: string; nextRunAt?: string; heldUntil?: string };
  export: { lastRunAt?: string; lastOutcome?: string; nextRunAt?: string };
}

export interface PollPartOptions {
  config: Pick<Config, 'poll' | 'export'>;
  mode: 'daemon' | 'oneshot';
  store: Store;
  upstream: ListSource;
  outbox: OutboxPort;
  clock: Clock;
  log: Logger;
  metrics: Registry;
  readiness: Readiness;
}

export function createPollPart(options: PollPartOptions): PollPart {
  const { config, store, outbox, clock, metrics } = options;
  const poller = createPoller({
    store, upstream: options.upstream, outbox, clock, metrics, poll: config.poll, log: options.log.child({ component: 'poll' }),
    warmWorkers: options.mode === 'daemon', logResults: options.mode === 'daemon', replica: store.replicaId,
    streams: streamsToPoll(config.poll.streams, (stream) => outbox.subscribers(stream).length > 0),
  });
  const exporter = createRosterExporter({
    poller, snapshot: store.snapshot, state: store.state, history: store.history, replica: store.replicaId, outbox, clock, metrics, timezone: config.export.timezone ?? config.poll.timezone, log: options.log.child({ component: 'roster' }),
  });
  // On a shared store the last cycle may be another replica's: looked up now and then as readiness
  // is asked, so that a failure here does not outlive a later success there.
  let lookedAt = -Infinity;
  options.readiness.register('poll', () => {
    if (store.shared && clock.now() - lookedAt >= RECORDED_LOOK_MS) {
      lookedAt = clock.now();
      void store.state.get<LastCycle>(LAST_CYCLE_KEY).then((cycle) => {
        if (cycle) poller.recorded(cycle);
      }, () => {});
    }
    return poller.readiness();
  });
  /** This replica's last export, while the store has not recorded it. */
  let lastExport: LastExportRun | undefined;
  const exportRoster = async (opts: { trigger?: string; signal?: AbortSignal } = {}) => {
    const startedAt = new Date(clock.now()).toISOString();
    const result = await exporter.exportRoster(opts);
    lastExport = { startedAt, outcome: result.outcome };
    return result;
  };
  const scheduler =
    options.mode === 'daemon'
      ? createScheduler({
          log: options.log.child({ component: 'scheduler' }),
          metrics,
          now: () => clock.now(),
          // Each tick runs on one replica: the one whose claim of it the store takes first.
          claimTick: (job, slot) => store.roles.claimTick(job, slot, clock.now()),
          finishTick: (job, slot) => store.roles.finishTick(job, slot, clock.now()),
          // A tick another replica took is claimed again once that one would be found dead, had it
          // died before its run ended (the store then grants it): a kill -9 mid-run loses no tick,
          // and a restart after one still runs its start-up poll.
          ...(store.shared ? { reclaimMs: REPLICA_TTL_MS + 5_000 } : {}),
          jobs: [
            {
              name: 'poll', schedule: config.poll.schedule, timezone: config.poll.timezone, runOnStart: config.poll.onStart,
              run: (trigger, signal) => poller.runCycle({ trigger, signal }),
              isBusy: () => poller.busy(),
              heldUntil: () => poller.heldUntil(),
            },
            {
              name: 'export', schedule: config.export.schedule, timezone: config.export.timezone ?? config.poll.timezone,
              runOnStart: config.export.onStart, run: (trigger, signal) => exportRoster({ trigger, signal }),
              // A nightly export that met an outage is tried again within the hour, not the next night.
              retry: { failed: (result) => exportFailed(result as ExportResult), delaysMs: EXPORT_RETRY_MS },
            },
          ],
        })
      : undefined;

  return {
    poller,
    exporter,
    scheduler,
    components: scheduler ? [poller, scheduler] : [poller],
    sync: (opts) => poller.runCycle({ trigger: 'manual', ...opts }),
    exportRoster: (opts) => exportRoster({ trigger: opts?.trigger ?? 'manual' }),
    async status(read = (work) => work.catch(() => undefined)) {
      const next = scheduler?.nextRuns() ?? {};
      // The last cycle of any replica (recorded in the store), or this one's while it is not recorded.
      const [recorded, exported] = await Promise.all([read(store.state.get<LastCycle>(LAST_CYCLE_KEY)), read(store.state.get<LastExportRun>(LAST_EXPORT_RUN_KEY))]);
      const own = poller.lastResult();
      const last = recorded && (!own || recorded.startedAt >= own.startedAt) ? recorded : own;
      // Likewise the last export of any replica, or this one's while it is not recorded.
      const lastExported = exported && (!lastExport || exported.startedAt >= lastExport.startedAt) ? exported : lastExport;
      return {
        poll: {
          ...(last ? { lastRunAt: last.startedAt, lastOutcome: last.outcome } : {}),
          ...(next.poll ? { nextRunAt: next.poll } : {}),
          ...(poller.heldUntil() ? { heldUntil: poller.heldUntil() } : {}),
        },
        export: {
          ...(lastExported ? { lastRunAt: lastExported.startedAt, lastOutcome: lastExported.outcome } : {}),
          ...(next.export ? { nextRunAt: next.export } : {}),
        },
      };
    },
  };
}
