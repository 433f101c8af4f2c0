import type { Logger } from 'pino';
import { describeError } from '../errors.js';
import type { Outbox } from './outbox.js';

/**
 * Log lines of what the deliveries came to, per connector:
 * - delivered: how many of each stream, gathered over a short window, so that a burst (a first
 *   cycle's thousands of records) is a few lines, and one invoice is one line soon after it was written;
 * - failed and to be retried: how many attempts of how many deliveries, how many of those were
 *   delivered since, and each kind of error (by code) with its count and last message, soon after
 *   the first and then at most once per `retryQuietMs`, so that a receiver down for hours is seen in
 *   the log without a line per attempt (a dead delivery has a line of its own, from the outbox).
 */
export interface DeliveryReport {
  /** Logs what was gathered and stops listening. */
  stop(): void;
}

export interface DeliveryReportOptions {
  outbox: Pick<Outbox, 'on'>;
  log: Logger;
  windowMs?: number;
  retryQuietMs?: number;
  now?: () => number;
}

/** One connector's failed attempts since the last report. */
interface Retries {
  count: number;
  ids: Set<string>;
  /** Of `ids`, how many were delivered since they failed. */
  delivered: number;
  /** By error code: how many, and the last message. */
  errors: Map<string, { n: number; last: string }>;
}

export function createDeliveryReport(options: DeliveryReportOptions): DeliveryReport {
  const windowMs = options.windowMs ?? 1000;
  const retryQuietMs = options.retryQuietMs ?? 60_000;
  const now = options.now ?? Date.now;
  let gathered = new Map<string, Map<string, number>>();
  let timer: NodeJS.Timeout | undefined;
  let retries = new Map<string, Retries>();
  let retryTimer: NodeJS.Timeout | undefined;
  let lastRetryReport = -Infinity;

  const report = () => {
    timer = undefined;
    const done = gathered;
    gathered = new Map();
    for (const [connector, streams] of done) {
      const counts = Object.fromEntries(streams);
      const text = [...streams].map(([stream, n]) => `${n} ${stream}`).join(', ');
      options.log.info({ connector, delivered: counts }, `delivered to ${connector}: ${text}`);
    }
  };

  const reportRetries = () => {
    retryTimer = undefined;
    const failed = retries;
    retries = new Map();
    if (failed.size > 0) lastRetryReport = now();
    for (const [connector, entry] of failed) {
      const { count, ids, delivered } = entry;
      const kinds = [...entry.errors.values()].sort((a, b) => b.n - a.n);
      const errors = kinds.slice(0, 3).map((k) => `${k.n}× ${k.last}`).join('; ') + (kinds.length > 3 ? `; ${kinds.length - 3} other kinds` : '');
      const since = delivered > 0 ? `, ${delivered} of them delivered since` : '';
      options.log.warn(
        { connector, retrying: count, deliveries: ids.size, deliveredSince: delivered, error: kinds[0]?.last },
        `deliveries to ${connector} failed and will be retried: ${count} failed attempt(s) of ${ids.size} deliver${ids.size === 1 ? 'y' : 'ies'} since the last report${since}; ${errors}`,
      );
    }
  };

  const offDelivered = options.outbox.on('delivered', ({ delivery }) => {
    const failing = retries.get(delivery.connector);
    if (failing?.ids.has(delivery.id)) failing.delivered += 1;
    const streams = gathered.get(delivery.connector) ?? new Map<string, number>();
    streams.set(delivery.stream, (streams.get(delivery.stream) ?? 0) + 1);
    gathered.set(delivery.connector, streams);
    if (!timer) {
      timer = setTimeout(report, windowMs);
      timer.unref();
    }
  });

  const offRetry = options.outbox.on('retry', ({ delivery, error }) => {
    const entry = retries.get(delivery.connector) ?? { count: 0, ids: new Set<string>(), delivered: 0, errors: new Map() };
    entry.count += 1;
    entry.ids.add(delivery.id);
    const text = error ? describeError(error) : (delivery.lastError ?? 'unknown error');
    const kind = error?.code ?? text;
    const seen = entry.errors.get(kind) ?? { n: 0, last: text };
    seen.n += 1;
    seen.last = text;
    entry.errors.set(kind, seen);
    retries.set(delivery.connector, entry);
    if (!retryTimer) {
      retryTimer = setTimeout(reportRetries, Math.max(windowMs, lastRetryReport + retryQuietMs - now()));
      retryTimer.unref();
    }
  });

  return {
    stop() {
      offDelivered();
      offRetry();
      clearTimeout(timer);
      clearTimeout(retryTimer);
      report();
      reportRetries();
    },
  };
}
