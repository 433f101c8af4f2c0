import { connect } from 'node:net';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { Readable } from 'node:stream';
import { pino } from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { configSchema } from '../src/config/index.js';
import { computeSignature, signatureHeader } from '../src/signature/index.js';
import type { Store } from '../src/store/index.js';
import { eventBody, inboxIdFor, invoice } from './support/webhooks.js';
import { ENGINES, testStore } from './support/stores.js';
import { tempDir } from './support/temp.js';

/**
 * Hostile inputs across header, timestamp, signature, secret, body, content type and method against
 * the daemon app on a loopback server, on each store engine. Each asserts the status, that nothing
 * was stored or enqueued, and that the server still answers.
 */
const SECRET = 'hostile-secret';
const LIMIT = 4096;
/** The connector every event is enqueued for: a stored event shows as its deliveries. */
const CONNECTOR = 'files';
const log = pino({ level: 'silent' });

/** Inbox ids of the event bodies the cases made, so a case can check that none of its own was stored. */
const made: string[] = [];

const idOf = inboxIdFor;

/** An event body, remembered in `made`. */
function event(fields: Record<string, unknown>): string {
  const b = eventBody('invoice.created', invoice(fields));
  made.push(idOf(b));
  return b;
}

const now = () => Math.floor(Date.now() / 1000);
let serial = 0;
/** A fresh body per case, so a quarantined one never hides another case. */
const body = () => event({ id: 5000 + serial++ });
const sig = (b: string | Buffer, ts = now(), secret = SECRET) => computeSignature(secret, ts, b);
const hdr = (value: unknown) => JSON.stringify(value);

interface Send {
  method?: string;
  path?: string;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer | (() => Readable);
}
type Case = { name: string; send: () => Send; status: number; quarantined?: boolean };

function signedCase(name: string, make: (b: string) => { header: unknown; body?: string | Buffer; headers?: Record<string, string> }, status: number, quarantined = false): Case {
  return {
    name, status, quarantined,
    send: () => {
      const b = body();
      const made = make(b);
      const headers: Record<string, string> = { 'content-type': 'application/json', ...made.headers };
      if (made.header !== undefined) headers['webhook-signature'] = String(made.header);
      return { headers, body: made.body ?? b };
    },
  };
}

const hex = (n: number, c = 'a') => c.repeat(n);
const cases: Case[] = [
  // header
  signedCase('no signature header', () => ({ header: undefined }), 401),
  signedCase('empty header', () => ({ header: '' }), 401),
  signedCase('header not JSON', (b) => ({ header: `t=${now()},v1=${sig(b)}` }), 401),
  signedCase('header JSON array', (b) => ({ header: hdr([now(), sig(b)]) }), 401),
  signedCase('header JSON null', () => ({ header: 'null' }), 401),
  signedCase('header JSON string', (b) => ({ header: hdr(sig(b)) }), 401),
  signedCase('header without signature', () => ({ header: hdr({ timestamp: now() }) }), 401),
  signedCase('header without timestamp', (b) => ({ header: hdr({ signature: sig(b) }) }), 401),
  signedCase('header of 5 KB', (b) => ({ header: hdr({ timestamp: now(), signature: sig(b), pad: 'x'.repeat(5000) }) }), 401),
  signedCase('header with a truncated JSON', (b) => ({ header: hdr({ timestamp: now(), signature: sig(b) }).slice(0, -1) }), 401),
  // timestamp
  signedCase('timestamp as a string', (b) => ({ header: hdr({ timestamp: String(now()), signature: sig(b) }) }), 401),
  signedCase('fractional timestamp', (b) => ({ header: hdr({ timestamp: now() + 0.5, signature: sig(b) }) }), 401),
  signedCase('negative timestamp', (b) => ({ header: hdr({ timestamp: -now(), signature: sig(b, -now()) }) }), 401),
  signedCase('zero timestamp', (b) => ({ header: hdr({ timestamp: 0, signature: sig(b, 0) }) }), 401),
  signedCase('timestamp beyond safe integers', (b) => ({ header: `{"timestamp":99999999999999999999,"signature":"${sig(b)}"}` }), 401),
  signedCase('stale by 301 s, correctly signed', (b) => ({ header: signatureHeader(SECRET, b, now() - 301) }), 401, true),
  // A minute past the window, not one second: `now()` is floored and the daemon reads its clock later,
  // so a timestamp 301 s ahead is inside the window once the request takes over a second under load.
  // The window's exact edges are verify.test.ts's, on a fixed clock.
  signedCase('future by 360 s, correctly signed', (b) => ({ header: signatureHeader(SECRET, b, now() + 360) }), 401, true),
  signedCase('1970, correctly signed', (b) => ({ header: signatureHeader(SECRET, b, 1) }), 401, true),
  signedCase('timestamp altered after signing', (b) => ({ header: hdr({ timestamp: now() - 1, signature: sig(b, now()) }) }), 401),
  signedCase('timestamp in ms signed as seconds', (b) => ({ header: hdr({ timestamp: now() * 1000, signature: sig(b, now()) }) }), 401),
  // signature
  signedCase('signature of 63 hex', (b) => ({ header: hdr({ timestamp: now(), signature: sig(b).slice(1) }) }), 401),
  signedCase('signature of 65 hex', (b) => ({ header: hdr({ timestamp: now(), signature: `${sig(b)}0` }) }), 401),
  signedCase('signature not hex', () => ({ header: hdr({ timestamp: now(), signature: hex(64, 'z') }) }), 401),
  signedCase('signature as base64', (b) => ({ header: hdr({ timestamp: now(), signature: Buffer.from(sig(b), 'hex').toString('base64') }) }), 401),
  signedCase('signature all zeros', () => ({ header: hdr({ timestamp: now(), signature: hex(64, '0') }) }), 401),
  signedCase('signature with one character changed', (b) => {
    const s = sig(b);
    return { header: hdr({ timestamp: now(), signature: `${s[0] === 'a' ? 'b' : 'a'}${s.slice(1)}` }) };
  }, 401),
  signedCase('signature of another body', () => ({ header: hdr({ timestamp: now(), signature: sig(body()) }) }), 401),
  signedCase('signature as a number', () => ({ header: hdr({ timestamp: now(), signature: 1234 }) }), 401),
  signedCase('sha1 signature', (b) => ({ header: hdr({ timestamp: now(), signature: sig(b).slice(0, 40) }) }), 401),
  // secret
  signedCase('wrong secret', (b) => ({ header: signatureHeader('not-the-secret', b, now()) }), 401),
  signedCase('empty secret', (b) => ({ header: signatureHeader('', b, now()) }), 401),
  signedCase('secret with a trailing newline', (b) => ({ header: signatureHeader(`${SECRET}\n`, b, now()) }), 401),
  signedCase('secret in upper case', (b) => ({ header: signatureHeader(SECRET.toUpperCase(), b, now()) }), 401),
  // body
  signedCase('body changed after signing', (b) => ({ header: signatureHeader(SECRET, b, now()), body: `${b} ` }), 401),
  signedCase('body re-serialized with other key order', (b) => ({ header: signatureHeader(SECRET, b, now()), body: JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(b) as object).reverse())) }), 401),
  signedCase('empty body, signed', () => ({ header: signatureHeader(SECRET, '', now()), body: '' }), 400),
  signedCase('not JSON, signed', () => ({ header: signatureHeader(SECRET, 'event=invoice.created', now()), body: 'event=invoice.created' }), 400),
  signedCase('JSON array, signed', () => ({ header: signatureHeader(SECRET, '[]', now()), body: '[]' }), 400),
  signedCase('no object, signed', () => ({ header: signatureHeader(SECRET, '{"event":"invoice.created"}', now()), body: '{"event":"invoice.created"}' }), 400),
  signedCase('null object, signed', () => ({ header: signatureHeader(SECRET, '{"event":"a.b","object":null}', now()), body: '{"event":"a.b","object":null}' }), 400),
  signedCase('numeric event, signed', () => ({ header: signatureHeader(SECRET, '{"event":7,"object":{}}', now()), body: '{"event":7,"object":{}}' }), 400),
  signedCase('invalid UTF-8, signed', () => {
    const bytes = Buffer.from([0x7b, 0x22, 0x65, 0xff, 0x22, 0x7d]);
    return { header: signatureHeader(SECRET, bytes, now()), body: bytes };
  }, 400),
  signedCase('nested 5000 deep, signed', () => {
    const deep = `{"event":"a.b","object":${'['.repeat(2000)}${']'.repeat(2000)}}`;
    return { header: signatureHeader(SECRET, deep, now()), body: deep };
  }, 400),
  signedCase('gzip-compressed, signed over the compressed bytes', (b) => {
    const zipped = gzipSync(b);
    return { header: signatureHeader(SECRET, zipped, now()), body: zipped, headers: { 'content-encoding': 'gzip' } };
  }, 415),
  signedCase('gzip named but sent plain, signed', (b) => ({ header: signatureHeader(SECRET, b, now()), headers: { 'content-encoding': ' GZip ' } }), 415),
  signedCase('over the body limit (Content-Length), signed', () => {
    const big = event({ id: 5000 + serial++, description: 'x'.repeat(LIMIT) });
    return { header: signatureHeader(SECRET, big, now()), body: big };
  }, 413),
  {
    name: 'over the body limit, chunked (no Content-Length)',
    status: 413,
    send: () => {
      const big = event({ id: 5000 + serial++, description: 'x'.repeat(LIMIT * 4) });
      return { headers: { 'webhook-signature': signatureHeader(SECRET, big, now()) }, body: () => Readable.from([Buffer.from(big.slice(0, 3000)), Buffer.from(big.slice(3000))]) };
    },
  },
  // content type (none of them changes how the bytes are verified)
  signedCase('malformed content type, bad signature', () => ({ header: hdr({ timestamp: now(), signature: hex(64) }), headers: { 'content-type': '%%%' } }), 401),
  signedCase('multipart content type, bad signature', () => ({ header: hdr({ timestamp: now(), signature: hex(64) }), headers: { 'content-type': 'multipart/form-data; boundary=x' } }), 401),
  signedCase('form content type, form body, signed', () => ({ header: signatureHeader(SECRET, 'event=a.b', now()), body: 'event=a.b', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 400),
  {
    name: 'no content type, bad signature',
    status: 401,
    send: () => ({ headers: { 'webhook-signature': hdr({ timestamp: now(), signature: hex(64) }) }, body: body() }),
  },
  // method and route
  ...['GET', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS'].map((method): Case => ({
    name: `${method} instead of POST`, status: 405,
    send: () => {
      const b = body();
      return { method, headers: { 'webhook-signature': signatureHeader(SECRET, b, now()) }, ...(['PUT', 'PATCH', 'DELETE'].includes(method) ? { body: b } : {}) };
    },
  })),
  ...['/webhooks/V2', '/webhooks', '/webhooks/v3', '/webhooks/v2/x'].map((path): Case => ({
    name: `POST ${path}`, status: 404,
    send: () => {
      const b = body();
      return { path, headers: { 'webhook-signature': signatureHeader(SECRET, b, now()), 'content-type': 'application/json' }, body: b };
    },
  })),
];

async function deliver(base: string, send: Send): Promise<number> {
  const payload = typeof send.body === 'function' ? send.body() : send.body;
  const response = await request(`${base}${send.path ?? '/webhooks/v2'}`, {
    method: (send.method ?? 'POST') as 'POST', headers: send.headers ?? {}, ...(payload === undefined ? {} : { body: payload }),
  });
  await response.body.dump();
  return response.statusCode;
}

/** Writes raw bytes on a fresh socket and returns the status of the answer. */
function raw(base: string, text: string): Promise<number> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(text));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)));
  });
}

describe.each(ENGINES)('POST /webhooks/v2 under hostile input, on %s', (engine) => {
  let app: App;
  let store: Store;
  let base: string;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    const out = await tempDir();
    cleanups.push(out.cleanup);
    // The app starts and stops the store; cleanup removes what it made.
    const opened = await testStore(engine, { start: false });
    cleanups.push(opened.cleanup);
    store = opened.store;
    const config = configSchema.parse({
      upstream: { baseUrl: 'sandbox', clientId: 'hostile-client', clientSecret: SECRET },
      sandbox: { students: 1 },
      // The embedded sandbox keeps its school in store.dir, beside the store given here too.
      store: { dir: path.join(out.dir, 'store') },
      server: { host: '127.0.0.1', port: 0 },
      webhooks: { bodyLimitBytes: LIMIT, reconcileOnStart: false },
      poll: { onStart: false, schedule: '0 0 1 1 *' },
      export: { onStart: false, schedule: '0 0 1 1 *' },
      connectors: [{ name: CONNECTOR, type: 'file', streams: ['events', 'invoices'], dir: path.join(out.dir, 'out') }],
    });
    app = await createApp({ config, log, mode: 'daemon', store });
    // Another route on the same instance: the webhook parser must not leak into it.
    app.http.post('/other', async (req) => ({ type: typeof req.body, body: req.body }));
    await app.start();
    // Nothing is delivered here, so what was enqueued stays in the outbox for `kept` to see.
    app.outbox.holdDeliveries();
    base = app.server!.url;
  });

  afterAll(async () => {
    await app.stop();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** The intake's count of stored events (a stored hostile delivery would move it). */
  const storedTotal = async () => {
    const line = (await app.metrics.metrics()).split('\n').find((l) => l.startsWith('schoolbridge_webhook_stored_total '));
    return Number(line?.split(' ').pop() ?? 0);
  };
  const duplicatesTotal = async () => {
    const line = (await app.metrics.metrics()).split('\n').find((l) => l.startsWith('schoolbridge_webhook_duplicates_total '));
    return Number(line?.split(' ').pop() ?? 0);
  };

  /** Whether the event is in the inbox, and how many of its deliveries the outbox holds (deliveries are held). */
  const kept = async (id: string) => {
    const deliveries = await Promise.all(['events', 'invoices'].map((stream) => store.outbox.get(`${CONNECTOR}:${stream}:${id}`)));
    return { inbox: (await store.inbox.get(id)) !== undefined, deliveries: deliveries.filter(Boolean).length };
  };

  it('has at least 40 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(40);
  });

  it.each(cases)('$name → $status', async (c) => {
    const quarantinedBefore = (await store.inbox.quarantined()).length;
    const first = made.length;
    expect(await deliver(base, c.send())).toBe(c.status);
    for (const id of made.slice(first)) expect(await kept(id), id).toEqual({ inbox: false, deliveries: 0 });
    expect(await storedTotal()).toBe(0);
    expect((await store.inbox.quarantined()).length).toBe(quarantinedBefore + (c.quarantined ? 1 : 0));
    const health = await request(`${base}/healthz`);
    await health.body.dump();
    expect(health.statusCode).toBe(200);
  });

  it('two Webhook-Signature headers → 401', async () => {
    const b = body();
    const h = signatureHeader(SECRET, b, now());
    const status = await raw(base, `POST /webhooks/v2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\nWebhook-Signature: ${h}\r\nWebhook-Signature: ${h}\r\nContent-Length: ${Buffer.byteLength(b)}\r\n\r\n${b}`);
    expect(status).toBe(401);
    expect(await kept(idOf(b))).toEqual({ inbox: false, deliveries: 0 });
  });

  it('a Content-Length over the limit is refused before any body byte is sent', async () => {
    const status = await raw(base, `POST /webhooks/v2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n`);
    expect(status).toBe(413);
  });

  it('a Content-Length over the limit with Expect: 100-continue gets the 413, not an invitation to send it', async () => {
    const status = await raw(base, `POST /webhooks/v2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\nExpect: 100-continue\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n`);
    expect(status).toBe(413);
  });

  it('after all that, a valid delivery is stored — with any content type or none — and other routes still parse JSON', async () => {
    expect(await storedTotal()).toBe(0);
    const contentTypes = [undefined, 'application/json', 'application/json; charset=utf-8', 'text/plain', 'garbage'];
    for (const [i, type] of contentTypes.entries()) {
      const b = event({ id: 9000 + i });
      const headers: Record<string, string> = { 'webhook-signature': signatureHeader(SECRET, b, now()) };
      if (type) headers['content-type'] = type;
      expect(await deliver(base, { headers, body: b }), String(type)).toBe(200);
      expect(await kept(idOf(b)), String(type)).toEqual({ inbox: true, deliveries: 2 });
    }
    expect(await storedTotal()).toBe(contentTypes.length);
    const other = await request(`${base}/other`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(await other.body.json()).toEqual({ type: 'object', body: { a: 1 } });
  });

  it('takes a delivery to the path with a trailing slash, as a service may have stored the callback URL', async () => {
    const b = event({ id: 9100 });
    expect(await deliver(base, { path: '/webhooks/v2/', headers: { 'webhook-signature': signatureHeader(SECRET, b, now()) }, body: b })).toBe(200);
    expect(await kept(idOf(b))).toEqual({ inbox: true, deliveries: 2 });
    expect(await deliver(base, { path: '/webhooks/v2/', method: 'GET' })).toBe(405);
  });

  it('a delivery that asks before it sends its body is invited and stored', async () => {
    const body = JSON.stringify({ event: 'invoice.created', object: { id: 'continue-1' } });
    const header = signatureHeader(SECRET, Buffer.from(body), Math.floor(Date.now() / 1000));
    const { hostname, port } = new URL(base);
    const answer = await new Promise<string>((resolve, reject) => {
      const request = httpRequest({ host: hostname, port: Number(port), method: 'POST', path: '/webhooks/v2', headers: { expect: '100-continue', 'content-length': Buffer.byteLength(body), 'webhook-signature': header } });
      request.on('continue', () => request.end(body));
      request.on('response', (response) => {
        let text = `${response.statusCode} `;
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve(text));
      });
      request.on('error', reject);
    });
    expect(answer).toMatch(/^200 \{"status":"stored"/);
  });

  it('twenty concurrent deliveries of one event, each signed at another second, store it once and all get 200', async () => {
    const [storedBefore, duplicatesBefore] = [await storedTotal(), await duplicatesTotal()];
    const b = eventBody('invoice.updated', invoice({ id: 424242 }));
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => deliver(base, { headers: { 'webhook-signature': signatureHeader(SECRET, b, now() - i) }, body: b })),
    );
    expect(statuses).toEqual(Array.from({ length: 20 }, () => 200));
    expect(await kept(idOf(b))).toEqual({ inbox: true, deliveries: 2 });
    expect([await storedTotal() - storedBefore, await duplicatesTotal() - duplicatesBefore]).toEqual([1, 19]);
  });
});
