import { describe, expect, it } from 'vitest';
import { BridgeError } from '../errors.js';
import { rejected as failure } from '../../test/support/errors.js';
import { client, json, on, useUpstreamStub } from '../../test/support/upstream-server.js';

useUpstreamStub();

/** lastContact: whether the upstream answered at all on the latest call. */
describe('lastContact', () => {
  it('records success, unreachable upstream and answers that still count as contact', async () => {
    const upstream = client({ retry: { maxAttempts: 1 } });
    expect(upstream.lastContact()).toBeUndefined();
    on('GET', '/api/v2/webhooks', json(200, { data: { webhooks: [] } }), json(503, {}));
    on('GET', '/api/v2/student', json(404, {}));
    await upstream.listWebhooks();
    expect(upstream.lastContact()).toMatchObject({ ok: true });
    await failure(upstream.listWebhooks());
    expect(upstream.lastContact()).toMatchObject({ ok: false, error: expect.stringContaining('upstream.http') });
    await failure(upstream.getStudent(1));
    expect(upstream.lastContact()).toMatchObject({ ok: true });
  });

  it('keeps each kind of call that failed the last time it ran, while other calls succeed, until it succeeds', async () => {
    const upstream = client({ retry: { maxAttempts: 1 } });
    on('GET', '/api/v2/students', json(200, { data: { students: [] }, error: { code: 'truncated' } }), json(200, { data: { students: [] } }));
    on('GET', '/api/v2/webhooks', json(200, { data: { webhooks: [] } }));
    on('GET', '/api/v2/student', json(404, {}));
    await failure(upstream.list('students'));
    await upstream.listWebhooks();
    await failure(upstream.getStudent(7));
    expect(upstream.lastContact()).toMatchObject({ ok: true });
    expect(upstream.failingCalls()).toEqual([{ call: 'GET /api/v2/students', ok: false, at: expect.any(Number), code: 'upstream.invalid_response', error: expect.stringContaining('truncated') }]);
    await upstream.list('students');
    expect(upstream.failingCalls()).toEqual([]);
  });

  it('forgets a failed registration or deletion of a webhook once listing the registrations succeeds', async () => {
    const upstream = client({ retry: { maxAttempts: 1 } });
    on('POST', '/api/v2/webhook', json(503, {}));
    on('DELETE', '/api/v2/webhook', json(503, {}));
    on('GET', '/api/v2/students', json(503, {}));
    on('GET', '/api/v2/webhooks', json(200, { data: { webhooks: [] } }));
    await failure(upstream.registerWebhook('invoice.created', 'https://bridge.example/webhooks/v2'));
    await failure(upstream.deleteWebhook(4));
    await failure(upstream.list('students'));
    expect(upstream.failingCalls().map((c) => c.call)).toEqual(['DELETE /api/v2/webhook', 'GET /api/v2/students', 'POST /api/v2/webhook']);
    // The reconcile lists before it writes: what the listing shows done is not tried again.
    await upstream.listWebhooks();
    expect(upstream.failingCalls().map((c) => c.call)).toEqual(['GET /api/v2/students']);
  });

  it('does not blame the upstream for what failed on our side while its answer was read', async () => {
    const upstream = client({ retry: { maxAttempts: 1 } });
    on('GET', '/api/v2/students', json(200, { data: { students: [] } }));
    // The poll stages the list as it reads it: a store that cannot write fails the read.
    const full = new BridgeError('store.unavailable', 'the store cannot write: SQLITE_FULL: database or disk is full', { retryable: true });
    await expect(upstream.fetchList('students', async () => {
      throw full;
    })).rejects.toBe(full);
    expect(upstream.lastContact()).toMatchObject({ ok: true });
  });
});
