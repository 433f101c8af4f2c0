import { LOOK_IDS, watchOutcomes } from './outcomes.js';
import { unconfigured, type Outbox } from './outbox.js';

/**
 * What `deliveries retry` reports, in-process or through the daemon: it exits 1 unless all were
 * delivered. `failed` also holds the ids named that were not retried (`missing`, `blocked`, in
 * flight, of a connector not in the config); `kept`, for a retry of every dead delivery, the dead
 * deliveries of connectors not in the config, left dead.
 */
export interface RetryReport {
  retried: string[];
  delivered: string[];
  failed: { id: string; status: string; lastError?: string }[];
  kept?: { connector: string; dead: number; reason: string }[];
}

export type RetryTarget = { id: string } | { ids: readonly string[] } | { allDead: true; connector?: string };

/** Why a delivery waiting behind another cannot be retried on its own. */
export const BLOCKED = 'it waits behind an earlier delivery of its key, which goes first (deliveries list names it): retry that one';

/** Why a named delivery was not retried: there is none, it waits behind its key's head, or it is in flight. */
async function notRetriedOf(outbox: Outbox, id: string): Promise<RetryReport['failed'][number]> {
  const delivery = await outbox.get(id);
  if (!delivery) return { id, status: 'missing', lastError: 'no such delivery (delivered already, or never enqueued)' };
  if (!outbox.configured(delivery.connector)) return { id, status: delivery.status, lastError: unconfigured(delivery.connector) };
  if (delivery.status === 'blocked') return { id, status: 'blocked', lastError: BLOCKED };
  return { id, status: delivery.status, lastError: 'in flight: its attempt decides' };
}

/**
 * Retries, then waits (at most `waitMs`) for the next outcome of every retried delivery: delivered,
 * or failed again. This process's outbox says so at once; one made by another process (a replica on
 * the same database) shows in the store. One with no outcome within the wait counts as not
 * delivered. Resolves with undefined when `target` names no delivery.
 */
export async function retryAndReport(outbox: Outbox, target: RetryTarget, waitMs: number): Promise<RetryReport | undefined> {
  const watch = watchOutcomes(outbox);
  const notRetried: RetryReport['failed'] = [];
  try {
    let retried: string[];
    if ('id' in target) {
      const entry = await outbox.retry(target.id);
      if (!entry) return undefined;
      // One waiting behind its key's head is not tried before the head is done: no outcome to wait for.
      if (entry.status === 'blocked') return { retried: [entry.id], delivered: [], failed: [{ id: entry.id, status: 'blocked', lastError: BLOCKED }] };
      retried = [entry.id];
    } else if ('ids' in target) {
      // Each delivery once, however often it is named; those not retried are reported, not dropped.
      const named = [...new Set(target.ids)];
      retried = await outbox.retryIds(named);
      const taken = new Set(retried);
      for (const id of named) if (!taken.has(id)) notRetried.push(await notRetriedOf(outbox, id));
    } else retried = await outbox.retryAllDead(target.connector);
    const outcomes = await watch.wait(retried, waitMs);
    const report: RetryReport = { retried, delivered: [], failed: [...notRetried] };
    if ('allDead' in target && target.connector === undefined) {
      const kept = [...(await outbox.counts())].filter(([name, counts]) => counts.dead > 0 && !outbox.configured(name));
      if (kept.length > 0) report.kept = kept.map(([connector, counts]) => ({ connector, dead: counts.dead, reason: unconfigured(connector) }));
    }
    const undelivered = retried.filter((id) => outcomes.get(id) !== 'delivered');
    for (let i = 0; i < undelivered.length; i += LOOK_IDS) {
      const ids = undelivered.slice(i, i + LOOK_IDS);
      const found = new Map((await outbox.find(ids)).map((d) => [d.id, d]));
      for (const id of ids) {
        const delivery = found.get(id);
        if (!delivery) outcomes.set(id, 'delivered');
        else report.failed.push({ id, status: delivery.status, ...(delivery.lastError ? { lastError: delivery.lastError } : {}) });
      }
    }
    report.delivered = retried.filter((id) => outcomes.get(id) === 'delivered');
    return report;
  } finally {
    watch.stop();
  }
}
