import type { Outbox } from './outbox/index.js';
import { outcomeOf, watchOutcomes } from './outbox/outcomes.js';
import type { ExportResult } from './poll/index.js';
import { deliveryId } from './store/index.js';

/** A roster delivery that did not go out: failed, still in flight, or waiting behind an earlier one. */
export interface NotDelivered {
  id: string;
  connector: string;
  status: string;
  error?: string;
}

export type ExportReport = ExportResult & { notDelivered?: NotDelivered[] };

/**
 * The roster's deliveries still in the outbox (not done): of this export, or of the same roster
 * exported before (the same record id), which this export then did not land either.
 */
export async function rosterOwed(outbox: Outbox, rosterId: string): Promise<NotDelivered[]> {
  const owed = await Promise.all(outbox.subscribers('roster').map((connector) => outbox.get(deliveryId(connector, rosterId))));
  return owed.filter((d) => d !== undefined).map((d) => ({ id: d.id, connector: d.connector, status: d.status, ...(d.lastError ? { error: d.lastError } : {}) }));
}

/**
 * Exports the roster and waits (at most `waitMs`) for the next outcome of each of its deliveries, as
 * `export roster` waits in-process: what the admin API answers, so that the command through a daemon
 * exits 1 for a roster that did not land, as it does on its own. A delivery waiting behind an
 * earlier one of the roster has no outcome to wait for: it is named at once.
 */
export async function exportAndReport(exportRoster: () => Promise<ExportResult>, outbox: Outbox, waitMs: number): Promise<ExportReport> {
  // Watched from before the export: a delivery may go out as soon as it is enqueued.
  const watch = watchOutcomes(outbox);
  try {
    const exported = await exportRoster();
    if (exported.outcome !== 'ok' || exported.id === undefined) return exported;
    const ids = outbox.subscribers('roster').map((connector) => deliveryId(connector, exported.id!));
    // A listed delivery waiting behind another shows as pending with whom it waits for.
    await watch.wait(ids, waitMs, (delivery, now) => (delivery?.status === 'blocked' || delivery?.waitingFor !== undefined ? 'failed' : outcomeOf(delivery, now)));
    const notDelivered = await rosterOwed(outbox, exported.id);
    return notDelivered.length > 0 ? { ...exported, notDelivered } : exported;
  } finally {
    watch.stop();
  }
}
