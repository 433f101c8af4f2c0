import type { Clock } from './clock.js';
import { createDeadlines } from './deadlines.js';

/**
 * How long a page (/status.json, the status page, a scrape of /metrics) waits for each store read:
 * a store that answers nothing (a database that froze, a network cut) would otherwise hold the page
 * until it answered, and a scraper gives up long before. Past it, the page goes without that figure,
 * as when the read fails; /readyz and the `store` check say why.
 */
export const PAGE_READ_MS = 2000;

/** A store read for a page: its value, or undefined when it failed or did not answer within PAGE_READ_MS. */
export type PageRead = <T>(work: Promise<T>) => Promise<T | undefined>;

export function createPageRead(clock: Pick<Clock, 'now' | 'sleep'>, ms = PAGE_READ_MS): PageRead {
  const deadlines = createDeadlines(clock, ms, Math.min(250, ms));
  return (work) => deadlines.within(work).then((answer) => answer?.value, () => undefined);
}
