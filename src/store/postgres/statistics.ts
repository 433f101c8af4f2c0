import type pg from 'pg';
import type { Logger } from 'pino';
import { describeError } from '../../errors.js';

/** Deliveries this process adds to the outbox between two ANALYZEs of its own. */
export const ANALYZE_AFTER = 10_000;

export interface OutboxStatistics {
  /** Committed calls added `rows` deliveries. */
  grew(rows: number): void;
  /** Resolves once no ANALYZE of ours runs. */
  idle(): Promise<void>;
}

/**
 * Keeps PostgreSQL's statistics of the outbox close to its size after it grew fast. Each connection
 * keeps a generic plan of every named statement (db.ts), costed with the table sizes known when it
 * was made. A claim's plan made while the outbox was nearly empty reads the whole table for every
 * batch (a sequential scan with the claimed keys as a filter) once the table holds many rows, until
 * autovacuum gets round to analyzing it, a minute or more later. An ANALYZE after every
 * ANALYZE_AFTER deliveries added ends that at once: new statistics make every connection plan its
 * statements again. It runs beside the calls, never inside one; one at a time per process.
 */
export function createOutboxStatistics(options: { pool: () => pg.Pool | undefined; log: Logger; after?: number }): OutboxStatistics {
  const after = options.after ?? ANALYZE_AFTER;
  let added = 0;
  let running: Promise<void> | undefined;

  const analyze = async () => {
    const pool = options.pool();
    if (!pool) return;
    try {
      await pool.query('ANALYZE outbox_delivery, outbox_record');
    } catch (error) {
      // Autovacuum does the same later; a store that cannot be reached says so through its calls.
      options.log.debug({ err: describeError(error) }, 'could not analyze the outbox');
    }
  };

  return {
    grew(rows) {
      added += rows;
      if (added < after || running) return;
      added = 0;
      running = analyze().finally(() => (running = undefined));
    },
    idle: () => running ?? Promise.resolve(),
  };
}
