import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { BridgeError } from '../errors.js';
import { adminBodies } from './admin-bodies.js';
import { outcomeReply, registerAdminRoutes, withBody, type AdminHandlers } from './admin-routes.js';

const apps: ReturnType<typeof Fastify>[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

async function build(token: string | undefined) {
  const http = Fastify();
  apps.push(http);
  const calls: string[] = [];
  const handlers: AdminHandlers = {
    '/admin/sync': withBody(adminBodies.dryRun, '{"dryRun"?: true|false}', async (body) => {
      calls.push(`sync ${JSON.stringify(body)}`);
      return { students: { created: 1 } };
    }),
    '/admin/events/quarantine/release': withBody(adminBodies.id, '{"id":"<quarantined id>"}', (body) => {
      calls.push(`release ${body.id}`);
      return { released: body.id };
    }),
    '/admin/resync': withBody(adminBodies.resync, '{"connector":"<name>","streams"?:[…]}', (body) => {
      calls.push(`resync ${JSON.stringify(body)}`);
      return {};
    }),
    '/admin/deliveries/retry': async (body) => {
      calls.push(`retry ${JSON.stringify(body)}`);
      return (body as { id?: string }).id === 'nope' ? { status: 404, body: { error: 'no delivery "nope"' } } : { status: 200, body: { retried: ['x'] } };
    },
    '/admin/events/reprocess': async () => {
      throw new BridgeError('webhooks.not_found', 'no such event');
    },
    '/admin/export': async () => {
      throw new Error('disk on fire');
    },
    '/admin/events/release': async () => {
      throw new BridgeError('webhooks.conflict', 'x was re-emitted by someone else meanwhile; run the command again', { retryable: true });
    },
    '/admin/deliveries/list': async () => {
      throw new BridgeError('store.unavailable', 'the store cannot write: SQLITE_FULL: database or disk is full', { retryable: true });
    },
  };
  registerAdminRoutes(http, token, handlers);
  await http.ready();
  return { http, calls };
}

const auth = { authorization: 'Bearer s3cret' };

describe('admin routes', () => {
  it('do not exist when no admin token is configured (404)', async () => {
    const { http, calls } = await build(undefined);
    for (const url of ['/admin/sync', '/admin/export', '/admin/deliveries/retry']) {
      expect((await http.inject({ method: 'POST', url, headers: { authorization: 'Bearer anything' } })).statusCode).toBe(404);
    }
    expect(calls).toEqual([]);
  });

  it.each([
    ['no header', undefined],
    ['wrong token', 'Bearer nope'],
    ['a prefix of the token', 'Bearer s3cre'],
    ['not a bearer', 'Basic czNjcmV0'],
  ])('answer 401 with %s', async (_name, authorization) => {
    const { http, calls } = await build('s3cret');
    const response = await http.inject({ method: 'POST', url: '/admin/sync', headers: authorization ? { authorization } : {} });
    expect(response.statusCode).toBe(401);
    expect(calls).toEqual([]);
  });

  it('run the handler with the right token and pass the JSON body', async () => {
    const { http, calls } = await build('s3cret');
    const sync = await http.inject({ method: 'POST', url: '/admin/sync', headers: auth, payload: { dryRun: true } });
    expect(sync.statusCode).toBe(200);
    expect(sync.json()).toEqual({ students: { created: 1 } });
    expect(calls).toEqual(['sync {"dryRun":true}']);
  });

  it('run nothing for a body of the wrong shape, and say what to send (400)', async () => {
    const { http, calls } = await build('s3cret');
    const cases: [string, unknown, string][] = [
      ['/admin/sync', { dryRun: 'true' }, 'dryRun: Invalid input: expected boolean, received string; send {"dryRun"?: true|false}'],
      ['/admin/sync', { dryrun: true }, 'Unrecognized key: "dryrun"; send {"dryRun"?: true|false}'],
      ['/admin/sync', [], 'Invalid input: expected object, received array; send {"dryRun"?: true|false}'],
      ['/admin/events/quarantine/release', {}, 'id: Invalid input: expected string, received undefined; send {"id":"<quarantined id>"}'],
      ['/admin/events/quarantine/release', { id: { a: 1 } }, 'id: Invalid input: expected string, received object; send {"id":"<quarantined id>"}'],
      ['/admin/resync', { connector: 'files', streams: 'students' }, 'streams: Invalid input: expected array, received string; send {"connector":"<name>","streams"?:[…]}'],
    ];
    for (const [url, payload, message] of cases) {
      const response = await http.inject({ method: 'POST', url, headers: auth, payload: payload as object });
      expect({ url, status: response.statusCode, body: response.json() }).toEqual({ url, status: 400, body: { error: 'bad_request', message } });
    }
    expect(calls).toEqual([]);
  });

  it('refuse a body that is not JSON (415) and read no body as {}', async () => {
    const { http, calls } = await build('s3cret');
    const text = await http.inject({ method: 'POST', url: '/admin/sync', headers: { ...auth, 'content-type': 'text/plain' }, payload: '{"dryRun":true}' });
    expect(text.statusCode).toBe(415);
    expect(text.json()).toEqual({ error: 'unsupported_media_type', message: 'send the body as JSON, with Content-Type: application/json' });
    expect(calls).toEqual([]);
    const none = await http.inject({ method: 'POST', url: '/admin/sync', headers: auth });
    expect(none.statusCode).toBe(200);
    const charset = await http.inject({ method: 'POST', url: '/admin/sync', headers: { ...auth, 'content-type': 'application/json; charset=utf-8' }, payload: '{"dryRun":false}' });
    expect(charset.statusCode).toBe(200);
    expect(calls).toEqual(['sync {}', 'sync {"dryRun":false}']);
  });

  it('send a handler reply with its own status', async () => {
    const { http } = await build('s3cret');
    const missing = await http.inject({ method: 'POST', url: '/admin/deliveries/retry', headers: auth, payload: { id: 'nope' } });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error: 'no delivery "nope"' });
  });

  it('answer an action that reports its outcome with the status of its error, the report after the code and message', async () => {
    const http = Fastify();
    apps.push(http);
    const results = {
      '/admin/ok': { outcome: 'ok', rows: 3 },
      '/admin/upstream': { outcome: 'failed', reason: 'upstream.http', message: 'upstream answered HTTP 500', rows: 0 },
      '/admin/store': { outcome: 'failed', reason: 'store.unavailable', message: 'the store cannot write: SQLITE_FULL', rows: 0 },
      '/admin/aborted': { outcome: 'aborted', reason: 'mass_delete', message: '3 of 5 students would be deleted' },
    };
    registerAdminRoutes(http, 's3cret', Object.fromEntries(Object.entries(results).map(([url, result]) => [url, () => outcomeReply(result)])));
    await http.ready();
    const answer = async (url: string) => {
      const response = await http.inject({ method: 'POST', url, headers: auth });
      return { status: response.statusCode, retryAfter: response.headers['retry-after'], body: response.json() as unknown };
    };
    expect(await answer('/admin/ok')).toEqual({ status: 200, retryAfter: undefined, body: { outcome: 'ok', rows: 3 } });
    expect(await answer('/admin/upstream')).toEqual({ status: 500, retryAfter: undefined, body: { error: 'upstream.http', ...results['/admin/upstream'] } });
    expect(await answer('/admin/store')).toEqual({ status: 503, retryAfter: '5', body: { error: 'store.unavailable', ...results['/admin/store'] } });
    expect(await answer('/admin/aborted')).toMatchObject({ status: 500, body: { error: 'mass_delete', outcome: 'aborted' } });
  });

  it('refuse every action with 503 and Retry-After while the refusal holds, and run them again after', async () => {
    const http = Fastify();
    apps.push(http);
    let refusal: { status: number; body: unknown } | undefined = { status: 503, body: { error: 'store.unavailable', message: 'the store has not answered for 10 s' } };
    let runs = 0;
    registerAdminRoutes(http, 's3cret', { '/admin/sync': () => ((runs += 1), { outcome: 'ok' }) }, () => refusal);
    await http.ready();
    const refused = await http.inject({ method: 'POST', url: '/admin/sync', headers: auth });
    expect([refused.statusCode, refused.headers['retry-after'], refused.json()]).toEqual([503, '5', { error: 'store.unavailable', message: 'the store has not answered for 10 s' }]);
    expect(runs).toBe(0);
    refusal = undefined;
    expect((await http.inject({ method: 'POST', url: '/admin/sync', headers: auth })).statusCode).toBe(200);
    expect(runs).toBe(1);
  });

  it('map errors to statuses with a message', async () => {
    const { http } = await build('s3cret');
    const notFound = await http.inject({ method: 'POST', url: '/admin/events/reprocess', headers: auth, payload: { id: 'x' } });
    expect(notFound.statusCode).toBe(404);
    // The code once, in `error`: the message does not start with it again.
    expect(notFound.json()).toEqual({ error: 'webhooks.not_found', message: 'no such event' });
    const failed = await http.inject({ method: 'POST', url: '/admin/export', headers: auth });
    expect(failed.statusCode).toBe(500);
    expect(failed.json().message).toContain('disk on fire');
    // Changed meanwhile: a conflict, which the same request sent again may not meet.
    const conflict = await http.inject({ method: 'POST', url: '/admin/events/release', headers: auth });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json()).toMatchObject({ error: 'webhooks.conflict' });
    // A store that cannot write now: unavailable for a while, not a fault of the daemon.
    const full = await http.inject({ method: 'POST', url: '/admin/deliveries/list', headers: auth });
    expect(full.statusCode).toBe(503);
    expect(full.headers['retry-after']).toBe('5');
    expect(full.json()).toMatchObject({ error: 'store.unavailable', message: expect.stringContaining('SQLITE_FULL') });
  });

  it('take the scheme\'s name in any case', async () => {
    const { http, calls } = await build('s3cret');
    for (const authorization of ['bearer s3cret', 'BEARER s3cret']) {
      expect((await http.inject({ method: 'POST', url: '/admin/sync', headers: { authorization }, payload: {} })).statusCode).toBe(200);
    }
    expect(calls).toHaveLength(2);
  });
});
