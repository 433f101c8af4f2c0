import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { signatureHeader } from '../src/signature/index.js';
import { eventBody, invoice } from './support/webhooks.js';
import { nextEvent } from './support/outbox.js';
import { capturedLogger, quietConfig } from './support/quiet-daemon.js';
import { testStore } from './support/stores.js';
import { tempDir } from './support/temp.js';

/**
 * Nothing private on public endpoints or in logs: connectors whose URLs are credentials (a hook
 * path, `user:password@`, a token in the query) and a receiver that echoes the invoice it refuses
 * (buyer, e-mail, PESEL). Every public endpoint and every log line, at debug level, is searched for
 * each of those; the full error stays where an operator with the admin token or the CLI reads it.
 */
const SECRET = 'privacy-secret';
const URL_SECRETS = ['hookuser', 'hookpass-s3cr3t', 'zap-s3cr3t-path', 'q-s3cr3t', 'books-s3cr3t-path'];
const PERSONAL = { buyerName: 'Jan Kowalski', email: 'jan.kowalski@example.com', pesel: '85010112345' };
const NEVER = [...URL_SECRETS, ...Object.values(PERSONAL)];

/** A receiver that refuses every POST with 422 echoing what it got, and answers every HEAD 503. */
async function echoingReceiver(): Promise<{ base: string; server: Server }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(503).end();
      const sent = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { record?: unknown; invoice?: unknown };
      res.writeHead(422, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid invoice', invoice: sent.invoice ?? sent.record }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { base: `127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('public endpoints and logs', () => {
  it('show no secret-bearing URL and no echoed personal data; the admin API keeps the full error', async () => {
    const { base, server } = await echoingReceiver();
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { log, lines, logged } = capturedLogger();
    const { dir, cleanup } = await tempDir('privacy-');
    const opened = await testStore('sqlite', { start: false });
    cleanups.push(cleanup, opened.cleanup);
    const config = quietConfig(SECRET, path.join(dir, 'store'), {
      connectors: [
        { name: 'zap', type: 'webhook', streams: ['invoices'], url: `http://hookuser:hookpass-s3cr3t@${base}/hooks/catch/123/zap-s3cr3t-path/?token=q-s3cr3t`, secret: 'zap-signing' },
        { name: 'books', type: 'accounting', url: `http://${base}/books-s3cr3t-path/invoices`, secret: 'books-signing' },
      ],
    });
    const checked = new Promise<void>((resolve) => {
      let failed = 0;
      logged.on('line', (text: string) => {
        if (text.includes('"connector check failed"') && ++failed === 2) resolve();
      });
    });
    const app: App = await createApp({ config, log, mode: 'daemon', store: opened.store });
    cleanups.push(() => app.stop());
    const dead = [nextEvent(app.outbox, 'dead', (p) => p.delivery.connector === 'zap'), nextEvent(app.outbox, 'dead', (p) => p.delivery.connector === 'books')];
    await app.start();

    // The buyer first, so that the 200 characters of the receiver's answer kept in the error hold it.
    const body = eventBody('invoice.created', { id: 4242, buyer: { name: PERSONAL.buyerName, email: PERSONAL.email, pesel: PERSONAL.pesel }, ...invoice({ id: 4242 }) });
    const answer = await request(`${app.server!.url}/webhooks/v2`, {
      method: 'POST', body, headers: { 'webhook-signature': signatureHeader(SECRET, body, Math.floor(Date.now() / 1000)) },
    });
    expect(answer.statusCode).toBe(200);
    await answer.body.dump();
    await Promise.all(dead);
    await checked;

    const pages: Record<string, string> = {};
    for (const page of ['/readyz', '/status.json', '/', '/metrics', '/healthz']) {
      const response = await request(`${app.server!.url}${page}`);
      pages[page] = await response.body.text();
    }
    const everything = { ...pages, logs: lines.join('') };
    for (const [where, text] of Object.entries(everything)) {
      for (const never of NEVER) expect(text, `${never} in ${where}`).not.toContain(never);
    }

    // What they show instead: the origin, our error code and the receiver's status.
    const status = JSON.parse(pages['/status.json']!) as { dead: { connector: string; lastError: string }[]; connectors: { name: string; check: string }[] };
    expect(status.dead.map((d) => [d.connector, d.lastError]).sort()).toEqual([['books', 'accounting.rejected (HTTP 422)'], ['zap', 'webhook.rejected (HTTP 422)']]);
    expect(status.connectors.map((c) => c.check).sort()).toEqual([`http://${base} answers 503`, `http://${base} answers 503`]);
    expect(pages['/readyz']).toContain(`connector:zap: http://${base} answers 503`);
    expect(pages['/']).toContain('webhook.rejected (HTTP 422)');
    // The log keeps the error, with the personal data replaced.
    expect(lines.find((line) => line.includes('"delivery dead"') && line.includes('zap:'))).toContain('webhook.rejected: the receiver answered 422: {\\"error\\":\\"invalid invoice\\"');
    // Behind the admin API and the CLI (`deliveries list`), the full text is kept.
    const kept = await app.outbox.list({ state: 'dead' });
    expect(kept.map((d) => d.lastError).join()).toContain(PERSONAL.email);
  });
  it('show no personal data an upstream error answer names; the log keeps the error, the personal ids replaced', async () => {
    // A service whose every answer is a 423 (not retried) naming the person the call was about.
    const said = `student ${PERSONAL.buyerName} (${PERSONAL.email}, PESEL ${PERSONAL.pesel}) is locked`;
    const upstream = createServer((_req, res) => res.writeHead(423, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'locked', message: said } })));
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    cleanups.push(() => new Promise<void>((resolve) => upstream.close(() => resolve())));
    const { log, lines } = capturedLogger();
    const { dir, cleanup } = await tempDir('privacy-');
    cleanups.push(cleanup);
    const config = quietConfig(SECRET, path.join(dir, 'store'), {
      upstream: { baseUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`, token: 'static-token', clientSecret: SECRET },
      webhooks: { reconcileOnStart: true },
    });
    const app: App = await createApp({ config, log, mode: 'daemon' });
    cleanups.push(() => app.stop());
    await app.start();
    const cycle = await app.poll.sync({ trigger: 'test' });
    expect(cycle.outcome).toBe('failed');
    await vi.waitFor(() => expect(app.webhooks.reconciler.readiness()).toMatchObject({ ok: false, reason: expect.stringContaining('reconcile failed') }));

    const pages: Record<string, string> = {};
    for (const page of ['/readyz', '/status.json', '/']) {
      const response = await request(`${app.server!.url}${page}`);
      pages[page] = await response.body.text();
    }
    for (const [where, text] of Object.entries(pages)) {
      for (const never of [...Object.values(PERSONAL), 'is locked']) expect(text, `${never} in ${where}`).not.toContain(never);
    }
    // What they say instead: the call and the upstream's status.
    const ready = JSON.parse(pages['/readyz']!) as { reasons: string[] };
    expect(ready.reasons).toEqual([expect.stringMatching(/^webhooks: webhook reconcile failed 1×, next attempt .+: upstream\.http: GET \/api\/v2\/webhooks: upstream answered HTTP 423$/)]);
    // The log keeps what the service said, with its e-mail and PESEL replaced, in every field and in the message.
    const logs = lines.join('');
    for (const never of [PERSONAL.email, PERSONAL.pesel]) expect(logs).not.toContain(never);
    expect(lines.find((line) => line.includes('poll cycle failed'))).toMatch(/"msg":"poll cycle failed after [^"]*upstream answered HTTP 423: \\"student Jan Kowalski \(\[email\], PESEL \[redacted\]\) is locked\\"/);
  });
});
