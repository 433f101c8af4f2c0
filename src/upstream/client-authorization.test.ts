import { describe, expect, it } from 'vitest';
import type { UpstreamClientOptions } from './types.js';
import { rejected as failure } from '../../test/support/errors.js';
import { client, count, json, on, seen, studentList, useUpstreamStub } from '../../test/support/upstream-server.js';

useUpstreamStub();

/** How the client authorizes: a static token, or client credentials exchanged for one (and again on 401). */
describe('authorization', () => {
  it('sends the static bearer token', async () => {
    on('GET', '/api/v2/students', studentList(1, 2));
    expect((await client().list('students')).map((s) => s.id)).toEqual([1, 2]);
    expect(seen[0]?.headers.authorization).toBe('Bearer static-token');
  });

  it('a refused static token is an auth error, asked once', async () => {
    on('GET', '/api/v2/students', json(401, { error: 'invalid_token', error_description: 'The access token is invalid' }));
    const error = await failure(client().list('students'));
    expect(error).toMatchObject({ code: 'upstream.auth', status: 401, retryable: false });
    expect(error.message).toContain('The access token is invalid');
    expect(count('GET', '/api/v2/students')).toBe(1);
  });

  it('exchanges client credentials once for many concurrent calls', async () => {
    on('POST', '/api/v2/authorize', json(200, { access_token: 'issued-1', expires_in: 2592000, token_type: 'Bearer', scope: 'administrator' }));
    for (let i = 0; i < 5; i++) on('GET', '/api/v2/webhooks', json(200, { data: { webhooks: [] } }));
    const upstream = client({ auth: { clientId: 'id', clientSecret: 's3cret' } });
    await Promise.all(Array.from({ length: 5 }, () => upstream.listWebhooks()));
    expect(count('POST', '/api/v2/authorize')).toBe(1);
    const authorize = seen.find((s) => s.url === '/api/v2/authorize');
    expect(authorize?.headers.authorization).toBe(`Basic ${Buffer.from('id:s3cret').toString('base64')}`);
    expect(authorize?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(authorize?.body).toBe('grant_type=client_credentials');
    expect(seen.filter((s) => s.url === '/api/v2/webhooks').every((s) => s.headers.authorization === 'Bearer issued-1')).toBe(true);
  });

  it('re-authorizes once on 401 and retries, also for a POST', async () => {
    on('POST', '/api/v2/authorize',
      json(200, { access_token: 'old', expires_in: 2592000 }), json(200, { access_token: 'new', expires_in: 2592000 }));
    on('POST', '/api/v2/webhook', json(401, { error: 'invalid_token' }), json(200, { data: { webhook: { id: 3, event: 'invoice.created', callbackUrl: 'http://x' } } }));
    const hook = await client({ auth: { clientId: 'id', clientSecret: 's' } }).registerWebhook('invoice.created', 'http://x');
    expect(hook.id).toBe(3);
    expect(count('POST', '/api/v2/authorize')).toBe(2);
    expect(seen.filter((s) => s.url === '/api/v2/webhook').map((s) => s.headers.authorization)).toEqual(['Bearer old', 'Bearer new']);
  });

  it('gives up after one re-authorization', async () => {
    on('POST', '/api/v2/authorize', json(200, { access_token: 'a', expires_in: 60 }), json(200, { access_token: 'b', expires_in: 60 }));
    on('GET', '/api/v2/users', json(403, { error: 'access_denied' }), json(403, { error: 'access_denied' }));
    const error = await failure(client({ auth: { clientId: 'id', clientSecret: 's' } }).list('users'));
    expect(error.code).toBe('upstream.auth');
    expect(count('POST', '/api/v2/authorize')).toBe(2);
    expect(count('GET', '/api/v2/users')).toBe(2);
  });

  it('masks our credentials where the upstream\'s answer echoes them', async () => {
    on('POST', '/api/v2/authorize', json(200, { access_token: 'issued-token-1', expires_in: 60 }), json(200, { access_token: 'issued-token-2', expires_in: 60 }));
    const echo = (token: string) => json(401, { error: 'invalid_token', error_description: `Bearer ${token} of secret qa-SECRET-d34db33f revoked` });
    on('GET', '/api/v2/users', echo('issued-token-1'), echo('issued-token-2'));
    const error = await failure(client({ auth: { clientId: 'id', clientSecret: 'qa-SECRET-d34db33f' } }).list('users'));
    expect(error.code).toBe('upstream.auth');
    expect(error.message).toContain('"*** of secret *** revoked"');
    expect(error.message).not.toMatch(/issued-token|qa-SECRET/);
  });

  it('wrong client credentials are an auth error with the upstream message', async () => {
    on('POST', '/api/v2/authorize', json(400, { error: 'invalid_client', error_description: 'Client authentication failed' }));
    const error = await failure(client({ auth: { clientId: 'id', clientSecret: 'wrong' } }).list('students'));
    expect(error).toMatchObject({ code: 'upstream.auth', status: 400 });
    expect(error.message).toContain('Client authentication failed');
    expect(count('GET', '/api/v2/students')).toBe(0);
  });

  it.each([
    [{ token: '' }],
    [{ clientId: 'id', clientSecret: '' }],
    [{ clientId: '', clientSecret: 'x' }],
  ])('no usable credentials (%j) is a config error', (auth) => {
    expect(() => client({ auth: auth as UpstreamClientOptions['auth'] })).toThrow(
      expect.objectContaining({ code: 'upstream.config', message: expect.stringContaining('upstream.clientId') }),
    );
  });
});
