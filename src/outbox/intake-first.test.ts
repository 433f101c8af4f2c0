import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { heldUntil, INTAKE_FIRST } from './intake-first.js';

const { calmAfterMs, maxHoldMs } = INTAKE_FIRST;

describe('heldUntil', () => {
  it('lets a claim go when the intake has been calm for calmAfterMs', () => {
    expect(heldUntil(10_000, -Infinity, 9_999)).toBeUndefined();
    expect(heldUntil(10_000, 10_000 - calmAfterMs, 9_999)).toBeUndefined();
  });

  it('holds a claim while the intake is busy, until it calms or maxHoldMs after the last claim', () => {
    // Busy just now, claimed just now: the intake calms first (unless more webhooks pile up meanwhile).
    expect(heldUntil(10_000, 10_000, 9_990)).toBe(10_000 + calmAfterMs);
    // Busy just now, claimed long enough ago for the hold's end to come first.
    expect(heldUntil(10_000, 10_000, 10_000 - maxHoldMs + 10)).toBe(10_010);
  });

  it('lets a claim go maxHoldMs after the last, however busy the intake', () => {
    expect(heldUntil(10_000, 10_000, 10_000 - maxHoldMs)).toBeUndefined();
    // A worker that never claimed claims at once.
    expect(heldUntil(10_000, 10_000, -Infinity)).toBeUndefined();
  });

  it('never holds past the intake calming nor past maxHoldMs, and names a time to come', () => {
    const time = fc.integer({ min: 0, max: 1e9 });
    fc.assert(
      fc.property(time, fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 5000 }), (now, busyAgo, claimAgo) => {
        const until = heldUntil(now, now - busyAgo, now - claimAgo);
        const calm = busyAgo >= calmAfterMs;
        const due = claimAgo >= maxHoldMs;
        if (calm || due) return until === undefined;
        return until !== undefined && until > now && until <= now - busyAgo + calmAfterMs && until <= now - claimAgo + maxHoldMs;
      }),
    );
  });
});
