import type { Delivery, ListedDelivery } from '../store/index.js';
import type { Outbox } from './outbox.js';

export type Outcome = 'delivered' | 'failed';

/** How often the store is asked about deliveries another process may be making (PostgreSQL replicas). */
const LOOK_EVERY_MS = 250;
/**
 * Deliveries looked up in the store per look (one call), in turn: `--all-dead` may retry hundreds of
 * thousands, and this process's own outcomes arrive as events without a look.
 */
export const LOOK_IDS = 1000;

/**
 * The outcome of a delivery's next attempt, as the store shows it: gone (delivered), or attempted
 * and not in flight (failed: due later, or dead). Undefined while it waits or runs. A new delivery
 * and a retried one have no attempt yet, and a claim counts its attempt.
 */
export function outcomeOf(delivery: Delivery | undefined, now: number): Outcome | undefined {
  if (!delivery) return 'delivered';
  const inFlight = delivery.status === 'active' || (delivery.leaseUntil !== undefined && delivery.leaseUntil > now);
  return delivery.attempts > 0 && !inFlight ? 'failed' : undefined;
}

export interface OutcomeWatch {
  /**
   * Waits (at most `waitMs`) for the next outcome of each of `ids`, from when the watch began:
   * resolves with those seen. `decided` may take a delivery's state as its outcome sooner.
   */
  wait(ids: readonly string[], waitMs: number, decided?: (delivery: ListedDelivery | undefined, now: number) => Outcome | undefined): Promise<Map<string, Outcome>>;
  stop(): void;
}

/**
 * Watches deliveries' outcomes from now on (begin it before the action that makes them: a delivery
 * may go out at once). This process's outbox says so as it happens; one made by another process (a
 * replica on the same database) shows in the store, looked up every LOOK_EVERY_MS.
 */
export function watchOutcomes(outbox: Outbox): OutcomeWatch {
  const outcomes = new Map<string, Outcome>();
  /** With no outcome yet, in the order they are looked up in turn. */
  const waiting = new Set<string>();
  let wake: () => void = () => {};
  let timer: NodeJS.Timeout | undefined;
  const seen = (id: string, outcome: Outcome) => {
    if (!outcomes.has(id)) outcomes.set(id, outcome);
    // Only the last outcome ends the wait early: one look per outcome would read the store as often.
    if (waiting.delete(id) && waiting.size === 0) wake();
  };
  const offs = [
    outbox.on('delivered', ({ delivery }) => seen(delivery.id, 'delivered')),
    outbox.on('retry', ({ delivery }) => seen(delivery.id, 'failed')),
    outbox.on('dead', ({ delivery }) => seen(delivery.id, 'failed')),
  ];
  return {
    async wait(ids, waitMs, decided = outcomeOf) {
      for (const id of ids) if (!outcomes.has(id)) waiting.add(id);
      const deadline = Date.now() + waitMs;
      let turn = waiting.values();
      for (;;) {
        const left = deadline - Date.now();
        if (waiting.size === 0 || left <= 0) break;
        await new Promise<void>((resolve) => {
          wake = resolve;
          timer = setTimeout(resolve, Math.min(LOOK_EVERY_MS, left));
        });
        clearTimeout(timer);
        // The next of those still waiting, from where the last look ended, round and round.
        const look: string[] = [];
        for (let next = turn.next(); look.length < Math.min(LOOK_IDS, waiting.size); next = turn.next()) {
          if (next.done) turn = waiting.values();
          else if (waiting.has(next.value)) look.push(next.value);
        }
        const found = new Map((await outbox.find(look)).map((d) => [d.id, d]));
        const now = Date.now();
        for (const id of look) {
          const outcome = decided(found.get(id), now);
          if (outcome) seen(id, outcome);
        }
      }
      waiting.clear();
      return new Map(ids.flatMap((id) => (outcomes.has(id) ? [[id, outcomes.get(id)!] as const] : [])));
    },
    stop() {
      clearTimeout(timer);
      for (const off of offs) off();
    },
  };
}
