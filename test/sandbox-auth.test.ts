import { beforeEach, describe, expect, it } from 'vitest';
import { call as callWith, clock, defaultToken, form, sandbox, type CallInit, useSandbox } from './support/sandbox-api.js';

useSandbox();

/**
 * How the sandbox issues, checks, expires and revokes tokens. `token` is the bearer of this file's calls:
 * the one the sandbox issued before the test, until a test issues another in its place.
 */
let token: string;
beforeEach(() => {
  token = defaultToken();
});

const call = (method: string, path: string, init: CallInit = {}) => callWith(method, path, { ...init, token: init.token === undefined ? token : init.token });

describe('POST /api/v2/authorize', () => {
  const basic = `Basic ${Buffer.from('sandbox-client:sandbox-secret').toString('base64')}`;

  it.each([
    ['urlencoded', () => new URLSearchParams({ grant_type: 'client_credentials' })],
    ['multipart', () => form({ grant_type: 'client_credentials' })],
  ])('issues a token for HTTP Basic credentials and a %s grant', async (_kind, body) => {
    const answer = await call('POST', '/api/v2/authorize', { token: null, headers: { authorization: basic }, body: body() });
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.json!).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
    expect(answer.json).toMatchObject({ expires_in: 2592000, token_type: 'Bearer', scope: 'administrator' });
    expect((await call('GET', '/api/v2/webhooks', { token: answer.json!.access_token })).status).toBe(200);
  });

  it('accepts credentials as form fields too', async () => {
    const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'sandbox-client', client_secret: 'sandbox-secret' });
    expect((await call('POST', '/api/v2/authorize', { token: null, body })).status).toBe(200);
  });

  it('answers 400 invalid_client to bad credentials, in the flat OAuth shape', async () => {
    const wrong = `Basic ${Buffer.from('sandbox-client:nope').toString('base64')}`;
    const answer = await call('POST', '/api/v2/authorize', { token: null, headers: { authorization: wrong }, body: new URLSearchParams({ grant_type: 'client_credentials' }) });
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
  });

  it('answers 400 to a missing or unsupported grant type', async () => {
    const missing = await call('POST', '/api/v2/authorize', { token: null, headers: { authorization: basic }, body: new URLSearchParams({}) });
    expect(missing.status).toBe(400);
    expect(missing.json!.error).toBe('invalid_request');
    const other = await call('POST', '/api/v2/authorize', { token: null, headers: { authorization: basic }, body: new URLSearchParams({ grant_type: 'password' }) });
    expect(other.json!.error).toBe('unsupported_grant_type');
  });
});

describe('bearer tokens', () => {
  it('rejects a missing or unknown token with 401 in the flat OAuth shape', async () => {
    for (const bearer of [null, 'not-a-token']) {
      const answer = await call('GET', '/api/v2/students', { token: bearer });
      expect(answer.status).toBe(401);
      expect(answer.json).toEqual({ error: expect.any(String), error_description: expect.any(String) });
    }
  });

  it('expires a token after its lifetime', async () => {
    const short = sandbox.control.issueToken(60).access_token;
    expect((await call('GET', '/api/v2/webhooks', { token: short })).status).toBe(200);
    clock.advance(60_000);
    const answer = await call('GET', '/api/v2/webhooks', { token: short });
    expect(answer.status).toBe(401);
    expect(answer.json!.error_description).toMatch(/expired/);
    expect((await call('GET', '/api/v2/webhooks')).status).toBe(200);
  });

  it('expireTokens() makes every issued token fail', async () => {
    sandbox.control.expireTokens();
    expect((await call('GET', '/api/v2/webhooks')).status).toBe(401);
  });

  it('revokeTokens() makes old tokens (the static one too) fail, new ones work', async () => {
    expect((await call('GET', '/api/v2/webhooks', { token: 'static-token' })).status).toBe(200);
    sandbox.control.revokeTokens();
    const old = await call('GET', '/api/v2/webhooks');
    expect(old.status).toBe(401);
    expect(old.json!.error_description).toMatch(/revoked/);
    expect((await call('GET', '/api/v2/webhooks', { token: 'static-token' })).status).toBe(401);
    token = sandbox.control.issueToken().access_token;
    expect((await call('GET', '/api/v2/webhooks')).status).toBe(200);
  });
});
