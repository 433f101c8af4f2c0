import { describe, expect, it } from 'vitest';
import { webhookConnector } from '../connectors/webhook/index.js';
import { StoredRecord } from '../src/connectors/stored-record.js';
import { verifySignature } from '../src/signature/index.js';
import { change } from './support/outbox.js';
import { TEST_NOW_MS, testClock } from './support/clock.js';
import { context, receiver, SECRET, useReceiver } from './support/webhook-connector.js';

useReceiver();

/** One delivery call at a time: the request it sends, and what each kind of answer makes of it. */
describe('webhook connector', () => {
  it('POSTs the record as JSON, signed like the upstream, with its id as Idempotency-Key and the extra headers', async () => {
    const clock = testClock(TEST_NOW_MS, { sleep: 'timers' });
    const record = change('students', 12, 'created');
    const ctx = context(clock, { headers: { 'X-Api-Key': 'k1' } });
    // The config refuses headers of ours (config/fields.ts); given all the same, ours win.
    const forged = { ...ctx, config: { ...ctx.config, headers: { ...ctx.config.headers, 'Idempotency-Key': 'forged', 'User-Agent': 'forged' } } };
    const outcomes = await webhookConnector.deliver(forged, [StoredRecord.of(record)]);
    expect(outcomes).toEqual([{ status: 'done', httpStatus: 200 }]);
    const [got] = receiver.received;
    expect(JSON.parse(got!.body)).toEqual(record);
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['idempotency-key']).toBe(record.id);
    expect(got!.headers['x-api-key']).toBe('k1');
    expect(got!.headers['user-agent']).toBe('schoolbridge');
    const verified = verifySignature([SECRET], got!.headers['webhook-signature'], Buffer.from(got!.body), clock.now(), 300);
    expect(verified).toEqual({ ok: true, timestamp: Math.floor(clock.now() / 1000), secretIndex: 0 });
    expect(verifySignature(['other'], got!.headers['webhook-signature'], Buffer.from(got!.body), clock.now(), 300).ok).toBe(false);
  });

  it('POSTs the stored JSON text as the body, byte for byte, and signs those bytes', async () => {
    // A number spelt 1.50, spaces after separators and \u escapes: JSON.stringify of the parsed record
    // writes each of them differently, so only the stored text itself matches. "Żółta" is raw UTF-8.
    const clock = testClock(TEST_NOW_MS, { sleep: 'timers' });
    const id = 'users:9:000000000001';
    const json = `{"id":"${id}", "stream":"users", "key":9, "fee":1.50, "city":"\\u0141\\u00f3d\\u017a", "street":"Żółta 1"}`;
    const stored = new StoredRecord(id, 'users', json);
    expect(JSON.stringify(stored.record)).not.toBe(json);
    expect(await webhookConnector.deliver(context(clock), [stored])).toEqual([{ status: 'done', httpStatus: 200 }]);
    const [got] = receiver.received;
    expect(got!.body).toBe(json);
    expect(got!.headers['idempotency-key']).toBe(id);
    expect(verifySignature([SECRET], got!.headers['webhook-signature'], Buffer.from(json, 'utf8'), clock.now(), 300).ok).toBe(true);
  });

  it.each([
    [200, 'done'],
    [204, 'done'],
    [408, 'retry'],
    [429, 'retry'],
    [500, 'retry'],
    [503, 'retry'],
    [400, 'dead'],
    [401, 'dead'],
    [404, 'dead'],
    [410, 'dead'],
    [422, 'dead'],
  ])('answer %i → %s', async (status, expected) => {
    receiver.respond = () => ({ status });
    const [outcome] = await webhookConnector.deliver(context(), [StoredRecord.of(change('users', 1))]);
    expect(outcome!.status).toBe(expected);
    if (outcome!.status !== 'done') expect(outcome!.error.status).toBe(status);
  });

  it('a receiver that does not answer in time is a retry', async () => {
    receiver.respond = () => ({ status: 200, hang: true });
    const [outcome] = await webhookConnector.deliver(context(testClock(TEST_NOW_MS, { sleep: 'timers' }), { timeoutMs: 200 }), [StoredRecord.of(change('users', 1))]);
    expect(outcome).toMatchObject({ status: 'retry', error: { code: 'webhook.network' } });
  });

  it('an unreachable receiver is a retry and fails its check', async () => {
    await receiver.stop();
    const ctx = context();
    const [outcome] = await webhookConnector.deliver(ctx, [StoredRecord.of(change('users', 1))]);
    expect(outcome).toMatchObject({ status: 'retry', error: { code: 'webhook.network' } });
    expect(await webhookConnector.check(ctx)).toMatchObject({ ok: false, reason: expect.stringContaining('cannot reach http://127.0.0.1:') });
  });

  it('a receiver that answers 200 and trickles its body: done at the deadline, one POST, its connection dropped', async () => {
    receiver.respond = () => ({ status: 200, body: 'trickle' });
    const [outcome] = await webhookConnector.deliver(context(testClock(TEST_NOW_MS, { sleep: 'timers' }), { timeoutMs: 300 }), [StoredRecord.of(change('users', 1))]);
    expect(outcome).toEqual({ status: 'done', httpStatus: 200 });
    await receiver.whenCutOff(1);
    expect(receiver.received).toHaveLength(1);
  });

  it('an answer that never ends is read up to its first 512 bytes, then dropped', async () => {
    receiver.respond = () => ({ status: 503, body: 'endless' });
    const [outcome] = await webhookConnector.deliver(context(testClock(TEST_NOW_MS, { sleep: 'timers' }), { timeoutMs: 60_000 }), [StoredRecord.of(change('users', 1))]);
    expect(outcome).toMatchObject({ status: 'retry', error: { code: 'webhook.unavailable', message: `the receiver answered 503: ${'y'.repeat(200)}` } });
    await receiver.whenCutOff(1);
  });

  it('sends the URL\'s user:password@ as Basic authentication, on the POST and the check, unless an Authorization header is configured', async () => {
    const plain = new URL(context().config.url);
    plain.username = 'alice';
    plain.password = 'p@ss:w0rd';
    const basic = `Basic ${Buffer.from('alice:p@ss:w0rd').toString('base64')}`;
    const ctx = context(undefined, { url: plain.href });
    expect(await webhookConnector.deliver(ctx, [StoredRecord.of(change('students', 1))])).toEqual([{ status: 'done', httpStatus: 200 }]);
    expect(await webhookConnector.check(ctx)).toEqual({ ok: true });
    const configured = context(undefined, { url: plain.href, headers: { Authorization: 'Bearer mine' } });
    await webhookConnector.deliver(configured, [StoredRecord.of(change('students', 2))]);
    expect(receiver.received.map((r) => r.headers.authorization)).toEqual([basic, 'Bearer mine']);
    expect(receiver.probes.map((h) => h.authorization)).toEqual([basic]);
  });

  it('says in one line that an https:// URL reaches a server that does not answer TLS', async () => {
    const tls = context().config.url.replace(/^http:/, 'https:');
    const ctx = context(undefined, { url: tls });
    const why = 'ERR_SSL_WRONG_VERSION_NUMBER: the server does not answer TLS: an https:// URL to a plain-HTTP port? Use http://, or the port that serves TLS';
    const [outcome] = await webhookConnector.deliver(ctx, [StoredRecord.of(change('students', 1))]);
    expect(outcome).toMatchObject({ status: 'retry', error: { code: 'webhook.failed', message: why } });
    expect(await webhookConnector.check(ctx)).toEqual({ ok: false, reason: `cannot reach ${new URL(tls).origin}: ${why}` });
  });

  it('check passes when the endpoint answers at all', async () => {
    expect(await webhookConnector.check(context())).toEqual({ ok: true });
  });
});
