/**
 * The one back-off curve: the delay doubles with each failure from `baseMs` up to `maxMs`, and a
 * random share of at most `jitter` is taken off it, so that many callers that failed together do not
 * come back together. Taking jitter off (rather than adding it) keeps the delay under the cap, and
 * with `jitter` ≤ 0.5 the shortest next delay is never shorter than the longest previous one.
 */
export interface Backoff {
  baseMs: number;
  maxMs: number;
  /** The largest share of the delay taken off at random, in [0, 1]. */
  jitter: number;
}

/** The delay after `attempts` failures (≥ 1); `random` in [0, 1). */
export function backoff(attempts: number, curve: Backoff, random: number): number {
  const exponent = Math.min(Math.max(attempts, 1) - 1, 60);
  const ceiling = Math.min(curve.maxMs, curve.baseMs * 2 ** exponent);
  return Math.round(ceiling * (1 - curve.jitter * unit(random)));
}

function unit(value: number): number {
  return Number.isFinite(value) ? Math.min(Math.max(value, 0), 1) : 0;
}
