import type { Logger } from 'pino';
import { describeError } from '../errors.js';
import type { Outbox } from './outbox.js';

/**
 * Log lines of what the deliveries came to, per connector:
 * - delivered: how many of each stream, gathered over a short window, so that a burst (a first
 *   cycle's thousands of records) is a few lines, and one invoice is one line soon after it was written;
 * - failed and to be retried: how many, and the last error, soon after the first and then at most
 *   once per `retryQuietMs`, so that a receiver down for hours is seen in the log without a line per
 *   attempt (a dead delivery has a line of its own, from the outbox).
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

export function createDeliveryReport(options: DeliveryReportOptions): DeliveryReport {
  const windowMs = options.windowMs ?? 1000;
  const retryQuietMs = options.retryQuietMs ?? 60_000;
  const now = options.now ?? Date.now;
  let gathered = new Map<string, Map<string, number>>();
  let timer: NodeJS.Timeout | undefined;
  let retries = new Map<string, { count: number; error: string }>();
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
    for (const [connector, { count, error }] of failed) {
      options.log.warn({ connector, retrying: count, error }, `deliveries to ${connector} failed and will be retried: ${count} attempt(s) since the last report`);
    }
  };

  const offDelivered = options.outbox.on('delivered', ({ delivery }) => {
    const streams = gathered.get(delivery.connector) ?? new Map<string, number>();
    streams.set(delivery.stream, (streams.get(delivery.stream) ?? 0) + 1);
    gathered.set(delivery.connector, streams);
    if (!timer) {
      timer = setTimeout(report, windowMs);
      timer.unref();
    }
  });

  const offRetry = options.outbox.on('retry', ({ delivery, error }) => {
    const entry = retries.get(delivery.connector) ?? { count: 0, error: '' };
    entry.count += 1;
    entry.error = error ? describeError(error) : (delivery.lastError ?? '');
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
