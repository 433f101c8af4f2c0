import type { StoreHealth } from './port.js';

/**
 * Whether the store can write, as the last write found it. A failed write makes it unhealthy with
 * the reason; the next write that succeeds (the heartbeat probes every second meanwhile) heals it,
 * so a full disk or a database that was down needs no restart once it is back.
 */
export interface HealthState {
  current(): StoreHealth;
  failed(reason: string, now: number): void;
  succeeded(): void;
  on(listener: (health: StoreHealth) => void): () => void;
}

/**
 * `rank` weighs what a reason tells an operator (higher says more). While the store stays unable to
 * write, a later failure replaces the reason unless it ranks lower: one cause can fail writes in
 * several ways, and the vaguest of them should not hide the one that names it.
 */
export function createHealth(options: { rank?: (reason: string) => number } = {}): HealthState {
  const rank = options.rank ?? (() => 0);
  let state: StoreHealth = { ok: true };
  const listeners = new Set<(health: StoreHealth) => void>();
  const set = (next: StoreHealth) => {
    state = next;
    for (const listener of listeners) listener(next);
  };
  return {
    current: () => state,
    failed(reason, now) {
      if (!state.ok && (state.reason === reason || rank(reason) < rank(state.reason))) return;
      set({ ok: false, reason, since: state.ok ? now : state.since });
    },
    succeeded() {
      if (!state.ok) set({ ok: true });
    },
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
