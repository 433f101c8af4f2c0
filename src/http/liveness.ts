import { publicText } from '../public-text.js';
import type { LastContact } from '../upstream/index.js';

/**
 * What /healthz (and the image's HEALTHCHECK) answers: whether the daemon can work, as opposed to
 * /readyz's whether it works right now. It fails only on what neither waiting nor a restart mends
 * without someone changing the config: the upstream refuses our credentials. A store that cannot
 * write (disk full, database down) does not fail it: the daemon answers 503 to webhooks meanwhile and
 * resumes by itself once the store writes again, and restarting every replica while a shared
 * database is down would only delay that. Likewise an upstream that is down, slow or not contacted
 * yet. /readyz reports both.
 */
export type Liveness = { ok: true } | { ok: false; reasons: string[] };

export function liveness(upstream: LastContact | undefined): Liveness {
  if (upstream && !upstream.ok && upstream.code === 'upstream.auth') {
    // A public page: the call and its status, never what the service said (public-text.ts), as /readyz.
    return { ok: false, reasons: [`upstream: the credentials are refused (${publicText(upstream.error ?? upstream.code)}); fix upstream.token, or upstream.clientId and upstream.clientSecret`] };
  }
  return { ok: true };
}
