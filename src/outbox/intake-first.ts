/**
 * Webhooks first, deliveries after. A webhook's sender waits for its answer; a delivery of a record
 * already committed waits for nobody. Both share this process's CPU (and, on SQLite, its database
 * thread), so while webhooks pile up (a burst, the upstream catching up after an outage) a worker
 * starts a batch at most once per `maxHoldMs`, and the rest of its queue goes out once the intake is
 * calm again. The hold is bounded, so a connector still moves under a flood that never ends. Pure;
 * the worker asks before each claim.
 *
 * Times are monotonic real milliseconds (performance.now), not the injected clock: this shares a
 * CPU between two kinds of work now, and a test's frozen clock must not hold deliveries for ever.
 */
export interface IntakeFirstLimits {
  /** The intake counts as busy this long after it last had `IntakeLoad.SATURATED` webhooks in flight. */
  calmAfterMs: number;
  /** A worker starts a batch at least this often, however busy the intake. */
  maxHoldMs: number;
}

export const INTAKE_FIRST: IntakeFirstLimits = { calmAfterMs: 100, maxHoldMs: 1000 };

/** What the worker is told of the intake (webhooks/intake-load.ts). */
export interface IntakeBusy {
  /** When the intake last had many webhooks in flight at once (monotonic ms; -Infinity: never). */
  saturatedAt(): number;
  /** Now, on the same monotonic scale. */
  now(): number;
}

/**
 * Until when (monotonic ms) a worker whose last claim began at `lastClaimAt` waits before it claims
 * again; undefined when it may claim now.
 */
export function heldUntil(now: number, saturatedAt: number, lastClaimAt: number, limits: IntakeFirstLimits = INTAKE_FIRST): number | undefined {
  const calmAt = saturatedAt + limits.calmAfterMs;
  const dueAt = lastClaimAt + limits.maxHoldMs;
  if (now >= calmAt || now >= dueAt) return undefined;
  return Math.min(calmAt, dueAt);
}
