import { publicText } from './public-text.js';

/**
 * What /readyz reports. Components register a named check; the daemon is ready when every check is.
 * Checks are cheap reads of state the components keep (never network calls at request time).
 */
export type ReadinessState = { ok: true; detail?: string } | { ok: false; reason: string };

export interface Readiness {
  register(name: string, check: () => ReadinessState): void;
  /** Sets a fixed state for `name` (for things that change by event rather than by query). */
  set(name: string, state: ReadinessState): void;
  /** Every check's state, its texts as public pages may show them (public-text.ts). */
  evaluate(): { ready: boolean; checks: Record<string, ReadinessState> };
}

export function createReadiness(): Readiness {
  const checks = new Map<string, () => ReadinessState>();
  return {
    register(name, check) {
      checks.set(name, check);
    },
    set(name, state) {
      checks.set(name, () => state);
    },
    evaluate() {
      const out: Record<string, ReadinessState> = {};
      let ready = true;
      for (const [name, check] of checks) {
        let state: ReadinessState;
        try {
          state = check();
        } catch (error) {
          state = { ok: false, reason: `check failed: ${(error as Error).message}` };
        }
        out[name] = state.ok ? (state.detail === undefined ? state : { ok: true, detail: publicText(state.detail) }) : { ok: false, reason: publicText(state.reason) };
        if (!state.ok) ready = false;
      }
      return { ready, checks: out };
    },
  };
}
