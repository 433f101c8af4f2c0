import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { systemClock, type Clock } from '../clock.js';
import { describeError, isBridgeError } from '../errors.js';
import { counter, gauge } from '../metrics.js';
import type { RosterRow } from '../records.js';
import type { Store } from '../store/index.js';
import type { CycleResult } from './cycle.js';
import type { Poller } from './poller.js';
import type { OutboxPort } from './ports.js';
import { rosterRecord, rosterRow } from './roster.js';
import { STATE_COLLECTION } from './snapshot.js';
import { createYielder } from './yielder.js';

/**
 * The roster export (issue 7): a fresh poll cycle, then ONE `roster` record holding every student of
 * the list that cycle fetched, enqueued for the connectors subscribed to `roster`. A cycle that does
 * not succeed (an upstream failure, the mass-delete guard) fails the export too: a roster built from a
 * suspicious list would replace a good sheet with a bad one. The record id depends on the date and the
 * rows, so a second export the same day with the same rows is not delivered again.
 */
export interface ExportResult {
  outcome: 'ok' | 'failed';
  reason?: string;
  message?: string;
  id?: string;
  date?: string;
  rows: number;
  /** False when the same roster was already enqueued today. */
  enqueued: boolean;
  cycle: CycleResult | undefined;
}

export interface RosterExporter {
  exportRoster(options?: { trigger?: string; signal?: AbortSignal }): Promise<ExportResult>;
}

export interface RosterExporterOptions {
  poller: Poller;
  store: Store;
  outbox: OutboxPort;
  /** export.timezone ?? poll.timezone: the date in the record id and the file name. */
  timezone: string;
  log: Logger;
  metrics: Registry;
  clock?: Clock;
}

export const LAST_EXPORT_KEY = 'roster.lastExport';

export function createRosterExporter(options: RosterExporterOptions): RosterExporter {
  const { poller, store, outbox, log } = options;
  const clock = options.clock ?? systemClock;
  const exports = counter(options.metrics, 'schoolbridge_roster_exports_total', 'Roster exports by outcome', ['outcome']);
  const rowsGauge = gauge(options.metrics, 'schoolbridge_roster_rows', 'Rows of the last roster export');

  async function exportRoster(opts: { trigger?: string; signal?: AbortSignal } = {}): Promise<ExportResult> {
    const trigger = opts.trigger ?? 'manual';
    const { result: cycle, students } = await poller.cycle({ trigger: `export:${trigger}`, keepStudents: true, ...(opts.signal ? { signal: opts.signal } : {}) });
    if (cycle.outcome !== 'ok' || !students) {
      return finish({ outcome: 'failed', reason: cycle.reason, message: `the fresh poll did not succeed: ${cycle.message ?? cycle.outcome}`, rows: 0, enqueued: false, cycle });
    }
    try {
      const rows = await buildRows(students, opts.signal);
      const record = rosterRecord(rows, clock.now(), options.timezone);
      const enqueue = outbox.enqueueOps([record]);
      await store.commit([...enqueue, { op: 'put', c: STATE_COLLECTION, k: LAST_EXPORT_KEY, v: { id: record.id, date: record.date, rows: rows.length, at: record.generatedAt } }]);
      if (enqueue.length > 0) outbox.notify();
      rowsGauge.set(rows.length);
      return finish({ outcome: 'ok', id: record.id, date: record.date, rows: rows.length, enqueued: enqueue.length > 0, cycle });
    } catch (error) {
      if (!isBridgeError(error) && !opts.signal?.aborted) throw error;
      return finish({ outcome: 'failed', reason: isBridgeError(error) ? error.code : 'export.stopped', message: describeError(error), rows: 0, enqueued: false, cycle });
    }
  }

  function finish(result: ExportResult): ExportResult {
    exports.inc({ outcome: result.outcome });
    const { cycle: _cycle, ...fields } = result;
    if (result.outcome === 'ok') log.info(fields, result.enqueued ? 'roster exported' : 'roster unchanged since the last export today');
    // Stopping mid-export is not a failure of the export: the next start or schedule runs it again.
    else if (result.reason === 'poll.stopped') log.info(fields, `roster export interrupted: ${result.message}`);
    else log.error(fields, `roster export failed: ${result.message}`);
    return result;
  }

  return { exportRoster };
}

/** Rows in student id order (the list is sorted by the cycle), built without holding the event loop. */
async function buildRows(students: readonly Record<string, unknown>[], signal: AbortSignal | undefined): Promise<RosterRow[]> {
  const yielder = createYielder();
  const rows: RosterRow[] = [];
  for (const student of students) {
    rows.push(rosterRow(student));
    if (yielder.due()) await yielder.pause(signal);
  }
  return rows.sort((a, b) => a.studentId - b.studentId);
}
