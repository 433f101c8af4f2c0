import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { registerAdminRoutes } from './admin-routes.js';

const apps: ReturnType<typeof Fastify>[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

async function build(token: string | undefined) {
  const http = Fastify();
  apps.push(http);
  const calls: string[] = [];
  registerAdminRoutes(http, token, {
    sync: async () => {
      calls.push('sync');
      return { students: { created: 1 } };
    },
    retryDeliveries: async (body) => {
      calls.push(`retry ${JSON.stringify(body)}`);
      return { retried: 2 };
    },
  });
  await http.ready();
  return { http, calls };
}

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

  it('run the handler with the right token', async () => {
    const { http, calls } = await build('s3cret');
    const sync = await http.inject({ method: 'POST', url: '/admin/sync', headers: { authorization: 'Bearer s3cret' } });
    expect(sync.statusCode).toBe(200);
    expect(sync.json()).toEqual({ students: { created: 1 } });
    const retry = await http.inject({ method: 'POST', url: '/admin/deliveries/retry', headers: { authorization: 'Bearer s3cret' }, payload: { allDead: true } });
    expect(retry.json()).toEqual({ retried: 2 });
    expect(calls).toEqual(['sync', 'retry {"allDead":true}']);
  });

  it('say 500 with a message when a part is missing', async () => {
    const { http } = await build('s3cret');
    const response = await http.inject({ method: 'POST', url: '/admin/export', headers: { authorization: 'Bearer s3cret' } });
    expect(response.statusCode).toBe(500);
    expect(response.json().message).toContain('not available');
  });
});
