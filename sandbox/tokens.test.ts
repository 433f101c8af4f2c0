import { describe, expect, it } from 'vitest';
import { testClock } from '../test/support/clock.js';
import { createTokenStore, parseBasicAuth, parseBearer } from './tokens.js';

describe('TokenStore', () => {
  it('expires issued tokens at their lifetime, on the injected clock', () => {
    const clock = testClock(Date.UTC(2026, 10, 22, 9, 0, 0));
    const store = createTokenStore({ clock, ttlSeconds: 10 });
    const { access_token: token, expires_in } = store.issue();
    expect(expires_in).toBe(10);
    clock.advance(9_999);
    expect(store.check(token)).toBe('ok');
    clock.advance(1);
    expect(store.check(token)).toBe('expired');
    expect(store.check('never-issued')).toBe('unknown');
  });

  it('revokes every token, the static one included, but not later ones', () => {
    const store = createTokenStore({ clock: testClock(Date.UTC(2026, 10, 22, 9, 0, 0)), ttlSeconds: 10, staticToken: 'static' });
    const old = store.issue().access_token;
    store.revokeAll();
    expect(store.check(old)).toBe('revoked');
    expect(store.check('static')).toBe('revoked');
    expect(store.check(store.issue().access_token)).toBe('ok');
  });
});

describe('header parsing', () => {
  const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;
  it.each([
    [basic('id:secret'), { id: 'id', secret: 'secret' }],
    [basic('id:se:cr%3Aet'), { id: 'id', secret: 'se:cr:et' }],
    [basic('id:100%'), { id: 'id', secret: '100%' }],
    [basic('no-colon'), undefined],
    ['Bearer abc', undefined],
    [undefined, undefined],
  ])('Basic %s', (header, expected) => {
    expect(parseBasicAuth(header)).toEqual(expected);
  });

  it.each([
    ['Bearer abc', 'abc'],
    ['bearer abc ', 'abc'],
    ['Bearer', undefined],
    ['Basic abc', undefined],
  ])('Bearer %s', (header, expected) => {
    expect(parseBearer(header)).toBe(expected);
  });
});
