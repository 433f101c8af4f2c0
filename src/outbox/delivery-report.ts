import type { Logger } from 'pino';
import type { Outbox } from './outbox.js';

/**
 * A log line when records were delivered: per connector, how many of each stream, gathered over a
 * short window so that a burst (a first cycle's thousands of records) is a few lines, and one invoice
 * is one line soon after it was written.
 */
export interface DeliveryReport {
  /** Logs what was gathered and stops listening. */
  stop(): void;
}

export function createDeliveryReport(options: { outbox: Pick<Outbox, 'on'>; log: Logger; windowMs?: number }): DeliveryReport {
  const windowMs = options.windowMs ?? 1000;
  let gathered = new Map<string, Map<string, number>>();
  let timer: NodeJS.Timeout | undefined;

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

  const off = options.outbox.on('delivered', ({ delivery }) => {
    const streams = gathered.get(delivery.connector) ?? new Map<string, number>();
    streams.set(delivery.stream, (streams.get(delivery.stream) ?? 0) + 1);
    gathered.set(delivery.connector, streams);
    if (!timer) {
      timer = setTimeout(report, windowMs);
      timer.unref();
    }
  });

  return {
    stop() {
      off();
      clearTimeout(timer);
      report();
    },
  };
}
