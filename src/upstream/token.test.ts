import { describe, expect, it } from 'vitest';
import { testClock } from '../../test/support/clock.js';
import { createIssuedTokenSource, createStaticTokenSource, refreshMarginMs, type IssuedToken } from './token.js';

/** An issuer whose answers the test releases by hand, counting calls. */
function manualIssuer(lifetimeSeconds = 3600) {
  const pending: Array<(t: IssuedToken) => void> = [];
  let calls = 0;
  return {
    issue: () => {
      calls++;
      return new Promise<IssuedToken>((resolve) => pending.push(resolve));
    },
    release: () => pending.splice(0).forEach((resolve) => resolve({ token: `t${calls}`, expiresInSeconds: lifetimeSeconds })),
    get calls() {
      return calls;
    },
  };
}

describe('token sources', () => {
  it('a static token never refreshes', async () => {
    const source = createStaticTokenSource('abc');
    expect(await source.get()).toBe('abc');
    expect(source.reject('abc')).toBe(false);
  });

  it('many waiting requests share one refresh', async () => {
    const issuer = manualIssuer();
    const source = createIssuedTokenSource(issuer.issue, testClock(0, { sleep: 'resolve' }));
    const waiting = Array.from({ length: 20 }, () => source.get());
    issuer.release();
    expect(new Set(await Promise.all(waiting))).toEqual(new Set(['t1']));
    expect(issuer.calls).toBe(1);
  });

  it('caches until shortly before expiry', async () => {
    const issuer = manualIssuer(3600);
    const clock = testClock(0, { sleep: 'resolve' });
    const source = createIssuedTokenSource(issuer.issue, clock);
    const first = source.get();
    issuer.release();
    await first;
    clock.advance(3600_000 - refreshMarginMs(3600_000) - 1);
    expect(await source.get()).toBe('t1');
    clock.advance(1);
    const next = source.get();
    issuer.release();
    expect(await next).toBe('t2');
    expect(issuer.calls).toBe(2);
  });

  it('a token refused twice is forgotten once', async () => {
    const issuer = manualIssuer();
    const source = createIssuedTokenSource(issuer.issue, testClock(0, { sleep: 'resolve' }));
    const first = source.get();
    issuer.release();
    const token = await first;
    expect(source.reject(token)).toBe(true);
    const again = source.get();
    expect(source.reject(token)).toBe(true); // a second request with the old token: no second refresh
    const againToo = source.get();
    issuer.release();
    expect(await again).toBe('t2');
    expect(await againToo).toBe('t2');
    expect(issuer.calls).toBe(2);
  });

  it('a failed refresh is not cached', async () => {
    let calls = 0;
    const source = createIssuedTokenSource(async () => {
      calls++;
      if (calls === 1) throw new Error('down');
      return { token: 'ok', expiresInSeconds: 60 };
    }, testClock(0, { sleep: 'resolve' }));
    await expect(source.get()).rejects.toThrow('down');
    expect(await source.get()).toBe('ok');
  });

  it.each([
    [2_592_000_000, 300_000],
    [60_000, 6_000],
  ])('refresh margin of a %i ms lifetime is %i ms', (lifetime, margin) => {
    expect(refreshMarginMs(lifetime)).toBe(margin);
  });
});
