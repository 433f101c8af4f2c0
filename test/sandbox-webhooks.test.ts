import { describe, expect, it } from 'vitest';
import { SPEC_FIELDS } from './support/sandbox.js';
import { call, DATE_TIME, form, type Json, useSandbox } from './support/sandbox-api.js';

useSandbox();

/** Registering, listing and deleting webhooks. */
describe('webhooks', () => {
  it('registers, lists, deletes (and deleted ones are not listed)', async () => {
    const first = await call('POST', '/api/v2/webhook', { body: form({ event: 'invoice.created', callbackUrl: 'http://127.0.0.1:9/hook' }) });
    expect(first.status).toBe(200);
    const webhook = first.json!.data.webhook as Json;
    expect(Object.keys(webhook)).toEqual([...SPEC_FIELDS.webhook]);
    expect(webhook).toMatchObject({ event: 'invoice.created', callbackUrl: 'http://127.0.0.1:9/hook' });
    expect(Number.isInteger(webhook.id)).toBe(true);
    expect(webhook.createdAt).toMatch(DATE_TIME);
    const second = await call('POST', '/api/v2/webhook', { body: new URLSearchParams({ event: 'invoice.updated', callbackUrl: 'https://example.test/x' }) });
    expect(second.status).toBe(200);

    expect((await call('GET', '/api/v2/webhooks')).json).toEqual({ data: { webhooks: [webhook, second.json!.data.webhook] } });

    const deleted = await call('DELETE', `/api/v2/webhook?id=${webhook.id}`);
    expect(deleted.status).toBe(200);
    expect(Object.keys(deleted.json!.data.webhook)).toEqual([...SPEC_FIELDS.deletedWebhook]);
    expect(deleted.json!.data.webhook).toMatchObject({ id: webhook.id, isDeleted: true });
    expect(deleted.json!.data.webhook.deletedAt).toMatch(DATE_TIME);
    expect((await call('GET', '/api/v2/webhooks')).json!.data.webhooks).toEqual([second.json!.data.webhook]);
    expect((await call('DELETE', `/api/v2/webhook?id=${webhook.id}`)).status).toBe(404);
  });

  it.each([
    [{ callbackUrl: 'http://127.0.0.1/x' }, 400, "Request parameter 'event' is missing"],
    [{ event: 'invoice', callbackUrl: 'http://127.0.0.1/x' }, 400, "Request parameter 'event' is invalid"],
    [{ event: 'invoice.created' }, 400, "Request parameter 'callbackUrl' is missing"],
    [{ event: 'invoice.created', callbackUrl: 'not a url' }, 400, "Request parameter 'callbackUrl' is invalid"],
  ])('POST %j → %i', async (fields, status, message) => {
    const answer = await call('POST', '/api/v2/webhook', { body: form(fields) });
    expect(answer.status).toBe(status);
    expect(answer.json).toEqual({ error: { code: 'invalidRequest', message } });
  });

  it.each([
    ['', 400],
    ['?id=12345', 404],
  ])('DELETE %s → %i', async (query, status) => {
    expect((await call('DELETE', `/api/v2/webhook${query}`)).status).toBe(status);
  });
});
