import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { systemClock, type Clock } from '../clock.js';
import { describeError, isBridgeError } from '../errors.js';
import { counter, gauge } from '../metrics.js';
import type { RosterRow } from '../records.js';
import type { HistoryStore, Key, SnapshotStore, StateStore } from '../store/index.js';
import type { CycleResult } from './cycle.js';
import type { Poller } from './poller.js';
import type { OutboxPort } from './ports.js';
import { refusedForAnother } from './format.js';
import { rosterRecord, rosterRow } from './roster.js';
import { createYielder } from '../yielder.js';

/**
 * The roster export (poll/README.md): a fresh poll cycle, then ONE `roster` record holding every
 * student of the snapshot that cycle left, enqueued for the connectors subscribed to `roster`. A cycle
 * that does not succeed (an upstream failure, the mass-delete guard) fails the export too: a roster
 * built from a suspicious list would replace a good sheet with a bad one. The record id depends on
 * the date and the rows, so a second export the same day with the same rows is not delivered again.
 */
export interface ExportResult {
  outcome: 'ok' | 'failed';
  reason?: string;
  message?: string;
  id?: string;
  date?: string;
  rows: number;
  /** False when nothing was enqueued: see `notSent`. */
  enqueued: boolean;
  /**
   * Why an export that went well enqueued nothing: the same roster was enqueued today already, or no
   * connector takes the `roster` stream (then nothing is noted as exported, so that a connector
   * subscribed later the same day still gets it).
   */
  notSent?: 'unchanged' | 'no_connector';
  cycle: CycleResult | undefined;
}

export interface RosterExporter {
  exportRoster(options?: { trigger?: string; signal?: AbortSignal }): Promise<ExportResult>;
}

export interface RosterExporterOptions {
  poller: Poller;
  snapshot: Pick<SnapshotStore, 'scan'>;
  state: Pick<StateStore, 'get' | 'put'>;
  outbox: OutboxPort;
  /** export.timezone ?? poll.timezone: the date in the record id and the file name. */
  timezone: string;
  log: Logger;
  metrics: Registry;
  clock?: Clock;
  /** Where each export is kept as a run (the console's history). */
  history?: Pick<HistoryStore, 'recordRun'>;
  replica?: string;
}

export const LAST_EXPORT_KEY = 'roster.lastExport';
/** The state key of the last export any replica ran, whatever its outcome: what every status page shows. */
export const LAST_EXPORT_RUN_KEY = 'roster.lastRun';

export interface LastExportRun {
  startedAt: string;
  outcome: ExportResult['outcome'];
  replica?: string;
}
/** Students read from the snapshot per store call. */
const PAGE = 1000;

/** Whether an export failed for a reason a later try may not meet (one stopped with the daemon is not tried again). */
export function exportFailed(result: ExportResult): boolean {
  return result.outcome === 'failed' && result.reason !== 'export.stopped';
}

/**
 * How long an export waits for a poll cycle another process runs (its fresh cycle refused
 * `poll.busy`), trying again every EXPORT_BUSY_LOOK_MS: the nightly export and a poll tick land on
 * two replicas at the same minute, and the poll's cycle ends within minutes.
 */
export const EXPORT_BUSY_WAIT_MS = 10 * 60_000;
export const EXPORT_BUSY_LOOK_MS = 5_000;

/** The waits before a failed scheduled export runs again: within the hour, then every half hour. */
export const EXPORT_RETRY_MS = [60_000, 2 * 60_000, 5 * 60_000, 10 * 60_000, 30 * 60_000] as const;

export function createRosterExporter(options: RosterExporterOptions): RosterExporter {
  const { poller, snapshot, state, outbox, log } = options;
  const clock = options.clock ?? systemClock;
  const exports = counter(options.metrics, 'schoolbridge_roster_exports_total', 'Roster exports by outcome', ['outcome']);
  const rowsGauge = gauge(options.metrics, 'schoolbridge_roster_rows', 'Rows of the last roster export');

  async function exportRoster(opts: { trigger?: string; signal?: AbortSignal } = {}): Promise<ExportResult> {
    const trigger = opts.trigger ?? 'manual';
    const startedAt = clock.now();
    const result = await exportOnce(trigger, opts);
    const run = {
      kind: 'export' as const, trigger, startedAt, durationMs: clock.now() - startedAt, outcome: result.outcome,
      counts: { roster: { rows: result.rows, enqueued: result.enqueued ? 1 : 0 } },
      ...(result.reason ? { reason: result.reason } : {}), ...(result.message ? { message: result.message } : {}),
      ...(options.replica ? { replica: options.replica } : {}),
    };
    const lastRun: LastExportRun = { startedAt: new Date(startedAt).toISOString(), outcome: result.outcome, ...(options.replica ? { replica: options.replica } : {}) };
    const patch = { [LAST_EXPORT_RUN_KEY]: lastRun };
    // The run (the console's history) and the last run (every replica's status) in one transaction.
    await (options.history ? options.history.recordRun(run, patch) : state.put(patch))
      .catch((error: unknown) => log.debug({ err: describeError(error) }, 'the export run was not recorded'));
    return result;
  }

  /** The export's fresh cycle; one refused for another process's cycle is tried again until that one is done (bounded). */
  async function freshCycle(trigger: string, signal: AbortSignal | undefined): Promise<CycleResult> {
    const until = clock.now() + EXPORT_BUSY_WAIT_MS;
    for (let waited = false; ; waited = true) {
      const cycle = await poller.runCycle({ trigger: `export:${trigger}`, ...(signal ? { signal } : {}) });
      if (!refusedForAnother(cycle) || clock.now() + EXPORT_BUSY_LOOK_MS > until) return cycle;
      if (!waited) log.info({ trigger }, 'roster export waits for the poll cycle another process is running');
      try {
        await clock.sleep(EXPORT_BUSY_LOOK_MS, signal);
      } catch {
        return cycle;
      }
    }
  }

  async function exportOnce(trigger: string, opts: { signal?: AbortSignal }): Promise<ExportResult> {
    const cycle = await freshCycle(trigger, opts.signal);
    if (refusedForAnother(cycle) && opts.signal?.aborted) {
      return finish({ outcome: 'failed', reason: 'export.stopped', message: 'stopped while it waited for the poll cycle another process is running', rows: 0, enqueued: false, cycle });
    }
    if (cycle.outcome !== 'ok') {
      return finish({ outcome: 'failed', reason: cycle.reason, message: `the fresh poll did not succeed: ${cycle.message ?? cycle.outcome}`, rows: 0, enqueued: false, cycle });
    }
    try {
      const rows = await readRows(snapshot, opts.signal);
      const record = rosterRecord(rows, clock.now(), options.timezone);
      rowsGauge.set(rows.length);
      const done = { outcome: 'ok' as const, id: record.id, date: record.date, rows: rows.length, cycle };
      if (outbox.subscribers('roster').length === 0) return finish({ ...done, enqueued: false, notSent: 'no_connector' });
      // The same rows the same day make the same record: what was exported is not sent again.
      const last = await state.get<{ id: string }>(LAST_EXPORT_KEY);
      if (last?.id === record.id) return finish({ ...done, enqueued: false, notSent: 'unchanged' });
      const added = await outbox.enqueue([record], { [LAST_EXPORT_KEY]: { id: record.id, date: record.date, rows: rows.length, at: record.generatedAt } });
      return finish({ ...done, enqueued: added > 0 });
    } catch (error) {
      if (!isBridgeError(error) && !opts.signal?.aborted) throw error;
      return finish({ outcome: 'failed', reason: isBridgeError(error) ? error.code : 'export.stopped', message: describeError(error), rows: 0, enqueued: false, cycle });
    }
  }

  function finish(result: ExportResult): ExportResult {
    exports.inc({ outcome: result.outcome });
    const { cycle: _cycle, ...fields } = result;
    if (result.outcome === 'ok') log.info(fields, `roster ${result.date}: ${notSentWhy(result) ?? `exported: ${result.rows} students`}`);
    // Stopping mid-export is not a failure of the export: the next start or schedule runs it again.
    else if (result.reason === 'poll.stopped' || result.reason === 'export.stopped') log.info(fields, `roster export interrupted: ${result.message}`);
    else log.error(fields, `roster export failed: ${result.message}`);
    return result;
  }

  return { exportRoster };
}

/** Why a roster export that went well sent nothing, in words; undefined when it was enqueued. */
export function notSentWhy(result: Pick<ExportResult, 'enqueued' | 'notSent'>): string | undefined {
  if (result.enqueued) return undefined;
  return result.notSent === 'no_connector'
    ? 'not sent: no connector takes the roster stream (add roster to a connector\'s streams)'
    : 'unchanged since the last export today (not sent again)';
}

/** Every student of the snapshot as a roster row, in student id order, read a page at a time. */
async function readRows(snapshot: Pick<SnapshotStore, 'scan'>, signal: AbortSignal | undefined): Promise<RosterRow[]> {
  const yielder = createYielder();
  const rows: RosterRow[] = [];
  for (let after: Key | undefined; ; ) {
    const page = await snapshot.scan('students', after, PAGE);
    for (const row of page) {
      rows.push(rosterRow(JSON.parse(row.body) as Record<string, unknown>));
      if (yielder.due()) await yielder.pause(signal);
    }
    if (page.length < PAGE) return rows;
    after = page.at(-1)!.key;
  }
}
