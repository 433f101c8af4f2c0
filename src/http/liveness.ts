import type { StoreHealth } from '../store/index.js';
import type { LastContact } from '../upstream/index.js';

/**
 * What /healthz (and the image's HEALTHCHECK) answers: whether the daemon can work, as opposed to
 * /readyz's whether it works right now. It fails only on what will not mend by waiting — the
 * upstream refuses our credentials, or the store cannot write — so a container that only waits for
 * the upstream (down, slow, not contacted yet) stays healthy and is not restarted for it.
 */
export type Liveness = { ok: true } | { ok: false; reasons: string[] };

export function liveness(store: StoreHealth, upstream: LastContact | undefined): Liveness {
  const reasons: string[] = [];
  if (!store.ok) reasons.push(`store: cannot write (${store.reason})`);
  if (upstream && !upstream.ok && upstream.code === 'upstream.auth') {
    reasons.push(`upstream: the credentials are refused (${upstream.error ?? upstream.code}); fix upstream.token, or upstream.clientId and upstream.clientSecret`);
  }
  return reasons.length === 0 ? { ok: true } : { ok: false, reasons };
}
