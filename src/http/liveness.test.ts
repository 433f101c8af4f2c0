import { describe, expect, it } from 'vitest';
import { liveness } from './liveness.js';

describe('liveness: can the daemon work?', () => {
  it.each([
    ['no contact yet', undefined, true],
    ['the last call succeeded', { ok: true, at: 1 }, true],
    ['the upstream is unreachable: waiting, not failing', { ok: false, at: 1, code: 'upstream.network', error: 'upstream.network: ECONNREFUSED' }, true],
    ['the upstream times out', { ok: false, at: 1, code: 'upstream.timeout' }, true],
    ['the upstream answers 503', { ok: false, at: 1, code: 'upstream.http' }, true],
    ['the credentials are refused', { ok: false, at: 1, code: 'upstream.auth', error: 'upstream.auth: client credentials refused' }, false],
  ] as const)('%s → %s', (_name, upstream, ok) => {
    expect(liveness(upstream).ok).toBe(ok);
  });

  it('says what to fix', () => {
    expect(liveness({ ok: false, at: 1, code: 'upstream.auth', error: 'upstream.auth: refused' })).toEqual({
      ok: false, reasons: ['upstream: the credentials are refused (upstream.auth: refused); fix upstream.token, or upstream.clientId and upstream.clientSecret'],
    });
  });

  it('shows the call and its status, never what the service said: /healthz is public', () => {
    const said = 'Token of Anna Nowak anna.nowak@example.com revoked; secret qa-SECRET-d34db33f';
    const error = `upstream.auth: GET /api/v2/users: upstream answered HTTP 401: ${JSON.stringify(said)}`;
    expect(liveness({ ok: false, at: 1, code: 'upstream.auth', error })).toEqual({
      ok: false, reasons: ['upstream: the credentials are refused (upstream.auth: GET /api/v2/users: upstream answered HTTP 401); fix upstream.token, or upstream.clientId and upstream.clientSecret'],
    });
  });
});
