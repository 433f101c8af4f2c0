import { describe, expect, it } from 'vitest';
import type { ListedDelivery } from '../store/index.js';
import { withBody } from '../http/admin-routes.js';
import { adminRetry, RETRY_USAGE, retryBody } from './admin.js';
import type { Outbox } from './outbox.js';

const dead = (id: string, lastError: string) => ({ id, connector: 'hook', lastError }) as ListedDelivery;

function outbox() {
  const retried: string[][] = [];
  const deads = [
    dead('hook:a', 'expired after 3 attempts; last error: webhook.unavailable: the receiver answered 500: x'),
    dead('hook:b', 'expired after 9 attempts; last error: webhook.unavailable: the receiver answered 500: y'),
    dead('hook:c', 'webhook.rejected: the receiver answered 422: z'),
  ];
  const fake = {
    deadIds: async (connector: string, which: (d: ListedDelivery) => boolean) => deads.filter((d) => d.connector === connector && which(d)).map((d) => d.id),
    // As the store does: every id it has, once for each time it is named.
    retryIds: async (ids: readonly string[]) => (retried.push([...ids]), ids.filter((id) => /^hook:[abc]$/.test(id))),
    // Every retried delivery is gone from the store at once: delivered.
    get: async () => undefined,
    retry: async () => undefined,
    find: async () => [],
    on: () => () => {},
  } as unknown as Outbox;
  return { fake, retried };
}

describe('admin retry', () => {
  it('answers 404 for an id it does not know, with a code and a message as every admin error has', async () => {
    expect(await adminRetry(outbox().fake, { id: 'hook:nope' })).toEqual({ status: 404, body: { error: 'outbox.not_found', message: 'no delivery "hook:nope"' } });
  });

  it('retries a group of dead deliveries: one connector, one error, however many attempts each made', async () => {
    const { fake, retried } = outbox();
    const answer = await adminRetry(fake, { group: { connector: 'hook', error: 'webhook.unavailable (HTTP 500); gave up after retrying' } });
    expect(answer).toEqual({ status: 200, body: { retried: ['hook:a', 'hook:b'], delivered: ['hook:a', 'hook:b'], failed: [] } });
    expect(retried).toEqual([['hook:a', 'hook:b']]);
  });

  it('retries deliveries named by id; its route refuses a body it does not know', async () => {
    const { fake, retried } = outbox();
    expect(await adminRetry(fake, { ids: ['hook:c'] })).toEqual({ status: 200, body: { retried: ['hook:c'], delivered: ['hook:c'], failed: [] } });
    const route = withBody(retryBody, RETRY_USAGE, (body) => adminRetry(fake, body));
    for (const body of [{ ids: [] }, { group: { connector: 'hook' } }, { id: 'hook:c', allDead: true }, { allDead: false }]) {
      expect(await route(body)).toMatchObject({ status: 400, body: { error: 'bad_request', message: expect.stringContaining(`send ${RETRY_USAGE}`) as unknown } });
    }
    expect(retried).toEqual([['hook:c']]);
  });

  it('retries a delivery named twice once, and reports a named one that is not there', async () => {
    const { fake, retried } = outbox();
    expect(await adminRetry(fake, { ids: ['hook:c', 'nope', 'hook:c'] })).toEqual({
      status: 200,
      body: { retried: ['hook:c'], delivered: ['hook:c'], failed: [{ id: 'nope', status: 'missing', lastError: 'no such delivery (delivered already, or never enqueued)' }] },
    });
    expect(retried).toEqual([['hook:c', 'nope']]);
  });
});
