import { describe, expect, it } from 'vitest';
import { liveness } from './liveness.js';

const writable = { ok: true } as const;

describe('liveness: can the daemon work?', () => {
  it.each([
    ['no contact yet', writable, undefined, true],
    ['the last call succeeded', writable, { ok: true, at: 1 }, true],
    ['the upstream is unreachable: waiting, not failing', writable, { ok: false, at: 1, code: 'upstream.network', error: 'upstream.network: ECONNREFUSED' }, true],
    ['the upstream times out', writable, { ok: false, at: 1, code: 'upstream.timeout' }, true],
    ['the upstream answers 503', writable, { ok: false, at: 1, code: 'upstream.http' }, true],
    ['the credentials are refused', writable, { ok: false, at: 1, code: 'upstream.auth', error: 'upstream.auth: client credentials refused' }, false],
    ['the store cannot write', { ok: false, reason: 'SQLITE_FULL: database or disk is full', since: 1 }, undefined, false],
  ] as const)('%s → %s', (_name, store, upstream, ok) => {
    expect(liveness(store, upstream).ok).toBe(ok);
  });

  it('says what to fix', () => {
    expect(liveness(writable, { ok: false, at: 1, code: 'upstream.auth', error: 'upstream.auth: refused' })).toEqual({
      ok: false, reasons: ['upstream: the credentials are refused (upstream.auth: refused); fix upstream.token, or upstream.clientId and upstream.clientSecret'],
    });
  });
});
