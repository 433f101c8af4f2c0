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

export function createHealth(): HealthState {
  let state: StoreHealth = { ok: true };
  const listeners = new Set<(health: StoreHealth) => void>();
  const set = (next: StoreHealth) => {
    state = next;
    for (const listener of listeners) listener(next);
  };
  return {
    current: () => state,
    failed(reason, now) {
      if (!state.ok && state.reason === reason) return;
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
