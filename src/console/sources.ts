import type { Clock } from '../clock.js';
import type { Outbox } from '../outbox/index.js';
import type { Store } from '../store/index.js';
import type { QuarantineSummary } from '../webhooks/index.js';

/** What the console reads: the store's history, names, inbox and outbox, and the live outbox. */
export interface ConsoleSources {
  store: Pick<Store, 'history' | 'people' | 'inbox' | 'outbox'>;
  outbox: Pick<Outbox, 'list' | 'connectors' | 'subscribers'>;
  quarantine: () => Promise<QuarantineSummary[]>;
  clock: Clock;
  /** Times are shown in this zone (poll.timezone). */
  timezone: string;
  historyDays: number;
  /** The readiness checks failing now, the connectors' left out (problems list those apart). */
  unready: () => { name: string; reason: string }[];
  /** Why the store is not to be waited for now (it has answered nothing for a while), or undefined. */
  notAnswering?: () => string | undefined;
}

/**
 * Who asks: `authed` with the admin token. Receiver error texts (they can echo what was sent) go
 * only to those; everyone else gets our error code and the HTTP status (publicError).
 */
export interface Viewer {
  authed: boolean;
}
