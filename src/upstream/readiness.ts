import type { ReadinessState } from '../readiness.js';
import type { FailingCall, LastContact } from './types.js';

/**
 * The `upstream` check of /readyz: not ready while the last call failed, or while any kind of call
 * failed the last time it ran. The poll's lists fail every cycle while the reconcile's calls succeed
 * (a list endpoint that answers 503, or a body the client refuses): the last call alone says ok.
 */
export function upstreamReadiness(last: LastContact | undefined, failing: readonly FailingCall[]): ReadinessState {
  if (!last) return { ok: false, reason: 'no contact with the upstream yet' };
  if (!last.ok) return { ok: false, reason: `last upstream call failed: ${last.error ?? 'unknown error'}` };
  const [first, ...more] = failing;
  if (!first) return { ok: true };
  const others = more.length > 0 ? ` (and ${more.map((call) => call.call).join(', ')})` : '';
  return { ok: false, reason: `the last ${first.call} failed: ${first.error ?? 'unknown error'}${others}` };
}
