import { describe, expect, it } from 'vitest';
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
});
