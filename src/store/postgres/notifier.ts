import type pg from 'pg';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import { describeError } from '../../errors.js';
import type { StoreChange } from '../port.js';
import { CHANNEL } from './listener.js';

/**
 * Sends the notices the other replicas listen for (listener.ts), each after the commit that made
 * its change and outside that commit's transaction (docs/store.md "Notices").
 *
 * A NOTIFY inside a transaction makes its commit take a lock that every notifying commit on the
 * server shares, and hold it until the commit is on disk: the webhooks' and cycles' commits of every
 * replica would then reach the disk one after another, each with a WAL flush of its own instead of
 * sharing one. Here a notice is a statement of its own that does not wait for the disk (it changes
 * no data that a crash could lose), so that lock is held only while the notice is queued. Notices go
 * at most every SPACING_MS, those asked for meanwhile together in the next one: under a stream of
 * webhooks, a notice per commit would cost the server one more transaction per commit. A notice that
 * is lost (the process dies after the commit, the database is unreachable) is made up for by the
 * replicas' own periodic looks.
 */
export interface Notifier {
  tell(change: StoreChange): void;
  /**
   * Sends what is asked for now, without waiting out the spacing; resolves once every notice asked
   * for so far has been sent or given up (before the pool ends).
   */
  flush(): Promise<void>;
}

/** How long after a notice the next one may go: about how late another replica hears of a change. */
export const SPACING_MS = 50;

/** The statement of a notice: `synchronous_commit` off for its own transaction only. */
const NOTIFY = `SELECT set_config('synchronous_commit', 'off', true), pg_notify($1, change) FROM unnest($2::text[]) AS t(change)`;

export function createNotifier(options: { pool: () => pg.Pool | undefined; log: Logger; clock: Clock }): Notifier {
  const { clock } = options;
  const wanted = new Set<StoreChange>();
  let sending: Promise<void> | undefined;
  let sentAt = -Infinity;
  /** Cuts the spacing short (flush). */
  let hurry = new AbortController();

  async function send(): Promise<void> {
    while (wanted.size > 0) {
      const wait = sentAt + SPACING_MS - clock.now();
      if (wait > 0) await clock.sleep(wait, hurry.signal).catch(() => {});
      const changes = [...wanted];
      wanted.clear();
      const pool = options.pool();
      if (!pool) return;
      try {
        await pool.query(NOTIFY, [CHANNEL, changes]);
      } catch (error) {
        options.log.debug({ err: describeError(error), changes }, 'could not tell the other replicas of a change; they will find it by themselves');
      }
      sentAt = clock.now();
    }
  }

  function start(): void {
    sending = send().finally(() => {
      sending = undefined;
      // Asked for between the last send and now.
      if (wanted.size > 0) start();
    });
  }

  return {
    tell(change) {
      wanted.add(change);
      if (!sending) start();
    },
    flush() {
      const current = hurry;
      hurry = new AbortController();
      current.abort();
      return sending ?? Promise.resolve();
    },
  };
}
