import { describe, expect, it } from 'vitest';
import { BridgeError } from '../errors.js';
import type { OutboxEntry } from './entry.js';
import { checkOutcomes, failAll, lease, reclaim, retryByHand, settle } from './transitions.js';

const HOUR = 3_600_000;
const policy = { baseMs: 1000, maxMs: HOUR, maxAgeMs: 72 * HOUR };
const t0 = 1_000_000;
const pending: OutboxEntry = {
  id: 'a:r1', connector: 'a', key: 'r1', stream: 'students', order: 'students:1', seq: 1,
  status: 'pending', enqueuedAt: t0, runAt: t0, attempts: 0,
};
const active = lease(pending, t0, 60_000);
const ctx = { now: t0 + 10, policy, random: 0, stopping: false };
const transient = new BridgeError('x.unavailable', '503', { retryable: true, status: 503 });
const permanent = new BridgeError('x.rejected', '400', { status: 400 });

describe('entry transitions', () => {
  it('lease starts an attempt and holds the entry until leaseUntil', () => {
    expect(active).toMatchObject({ status: 'active', attempts: 1, leaseUntil: t0 + 60_000 });
  });

  it.each([
    ['done', { status: 'done' } as const, { kind: 'done' }],
    ['retry', { status: 'retry', error: transient } as const, { kind: 'retry', entry: { status: 'pending', runAt: t0 + 10 + 1000, lastError: 'x.unavailable: 503' } }],
    ['retry with Retry-After', { status: 'retry', error: transient, retryAfterMs: 5000 } as const, { kind: 'retry', entry: { runAt: t0 + 10 + 5000 } }],
    ['dead', { status: 'dead', error: permanent } as const, { kind: 'dead', entry: { status: 'dead', lastError: 'x.rejected: 400', attempts: 1 } }],
  ])('settle %s', (_name, outcome, expected) => {
    const result = settle(active, outcome, ctx);
    expect(result).toMatchObject(expected);
    expect(result.entry.leaseUntil).toBeUndefined();
    expect(result.entry.lastAttemptAt).toBe(t0 + 10);
  });

  it('a retry interrupted by stop is due at once and not counted', () => {
    expect(settle(active, { status: 'retry', error: transient }, { ...ctx, stopping: true }).entry).toMatchObject({ status: 'pending', attempts: 0, runAt: t0 + 10 });
  });

  it('a failure past the retry window is dead, saying why', () => {
    const result = settle(active, { status: 'retry', error: transient }, { ...ctx, now: t0 + 72 * HOUR });
    expect(result).toMatchObject({ kind: 'dead', entry: { lastError: 'expired after 1 attempts; last error: x.unavailable: 503' } });
  });

  it('reclaim and retry by hand', () => {
    expect(reclaim(active, t0 + 5)).toEqual({ ...pending, attempts: 1 });
    const dead = { ...pending, status: 'dead' as const, attempts: 7, lastError: 'x' };
    expect(retryByHand(dead, t0 + 99)).toMatchObject({ status: 'pending', attempts: 0, enqueuedAt: t0 + 99, runAt: t0 + 99, lastError: 'x' });
  });

  it('checks the connector kept its contract', () => {
    const ok = [{ status: 'done' as const }];
    expect(checkOutcomes(ok, 1)).toBe(ok);
    for (const bad of [[], [{ status: 'done' }, { status: 'done' }], [{ status: 'retry' }], [{ status: 'weird' }], undefined, 'x']) {
      expect(checkOutcomes(bad, 1)).toMatchObject([{ status: 'retry', error: { code: 'outbox.bad_outcomes' } }]);
    }
    expect(failAll(new Error('boom'), 2)).toMatchObject([{ status: 'retry', error: { code: 'outbox.deliver_failed' } }, { status: 'retry' }]);
    expect(failAll(permanent, 1)[0]).toMatchObject({ status: 'retry', error: permanent });
  });
});
