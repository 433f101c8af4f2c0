import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { signatureHeader } from '../src/signature/index.js';
import { eventBody, invoice } from './support/webhooks.js';
import { nextEvent } from './support/outbox.js';
import { capturedLogger, quietConfig } from './support/quiet-daemon.js';
import { tempDir } from './support/temp.js';

/**
 * The console behind the admin token: without it (or with a wrong one) no page or JSON endpoint
 * shows an e-mail address or a receiver's error text, and no action changes anything.
 */
const SECRET = 'console-secret';
const TOKEN = 'console-admin-token-0123456789abcdef';
const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/;
const ECHO = 'invalid invoice';

async function refusingReceiver(): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST') return void res.writeHead(200).end();
      res.writeHead(422, { 'content-type': 'application/json' }).end(JSON.stringify({ error: ECHO, got: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown }));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function daemon(server: Record<string, unknown>): Promise<{ app: App; url: string }> {
  const receiver = await refusingReceiver();
  cleanups.push(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
  const { dir, cleanup } = await tempDir('console-');
  cleanups.push(cleanup);
  const config = quietConfig(SECRET, path.join(dir, 'store'), {
    sandbox: { students: 4 },
    server: { host: '127.0.0.1', port: 0, ...server },
    connectors: [
      { name: 'files', type: 'file', streams: ['students', 'users'], dir: path.join(dir, 'out') },
      { name: 'zap', type: 'webhook', streams: ['invoices'], url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, secret: 'zap-signing' },
    ],
  });
  const app = await createApp({ config, log: capturedLogger('warn').log, mode: 'daemon' });
  cleanups.push(() => app.stop());
  await app.start();
  const url = app.server!.url;
  expect((await app.poll.sync()).outcome).toBe('ok');
  await app.history.refreshPeople();
  const dead = nextEvent(app.outbox, 'dead', (p) => p.delivery.connector === 'zap');
  const body = eventBody('invoice.created', { id: 77, buyer: { email: 'buyer@example.com' }, ...invoice({ id: 77 }) });
  const answer = await request(`${url}/webhooks/v2`, { method: 'POST', body, headers: { 'webhook-signature': signatureHeader(SECRET, body, Math.floor(Date.now() / 1000)) } });
  expect(answer.statusCode).toBe(200);
  await answer.body.dump();
  await dead;
  await app.outbox.whenIdle();
  return { app, url };
}

const get = async (url: string, authorization?: string) => {
  const r = await request(url, { headers: authorization ? { authorization } : {} });
  return { status: r.statusCode, text: await r.body.text() };
};
const post = async (url: string, body: unknown, authorization?: string) => {
  const r = await request(url, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) } });
  return { status: r.statusCode, json: (await r.body.json()) as Record<string, unknown> };
};

const PAGES = ['/', '/status.json', '/api/problems', '/api/runs', '/api/records?query=example', '/api/records?query=77', '/console/problems', '/console/runs', '/console/records?query=a'];

describe('the console behind the admin token', () => {
  it('shows no e-mail and no error text without the token or with a wrong one, and says why', async () => {
    const { app, url } = await daemon({ adminToken: TOKEN });
    for (const authorization of [undefined, 'Bearer wrong-token-wrong-token-wrong', `Basic ${TOKEN}`]) {
      for (const page of PAGES) {
        const { status, text } = await get(`${url}${page}`, authorization);
        expect(text, `${page} with ${authorization}`).not.toMatch(EMAIL);
        expect(text, `${page} with ${authorization}`).not.toContain(ECHO);
        if (page.startsWith('/api/') || page.startsWith('/console/')) {
          expect(status).toBe(401);
          expect(JSON.parse(text)).toMatchObject({ error: 'unauthorized', message: expect.stringContaining('server.adminToken') });
        }
      }
    }
    // With the token: names, e-mails and the receiver's words.
    const problems = JSON.parse((await get(`${url}/api/problems`, `Bearer ${TOKEN}`)).text) as { badge: string; dead: { connector: string; error: string; count: number; sample?: string }[] };
    expect(problems.badge).toBe('red');
    expect(problems.dead).toEqual([expect.objectContaining({ connector: 'zap', error: 'webhook.rejected (HTTP 422)', count: 1, sample: expect.stringContaining(ECHO) })]);
    const found = await get(`${url}/api/records?query=${encodeURIComponent('@')}`, `Bearer ${TOKEN}`);
    expect(found.text).toMatch(EMAIL);
    // A query given twice is searched by its first, not by both joined ("@,nobody").
    const twice = JSON.parse((await get(`${url}/api/records?query=${encodeURIComponent('@')}&query=nobody`, `Bearer ${TOKEN}`)).text) as { query: string };
    expect(twice.query).toBe('@');
    // Its pages are not to be framed by another site (their buttons act with the token) nor read as another type.
    for (const page of ['/', '/console/problems']) {
      const { headers } = await request(`${url}${page}`, { headers: { authorization: `Bearer ${TOKEN}` } }).then(async (r) => (await r.body.dump(), r));
      expect(headers, page).toMatchObject({ 'x-frame-options': 'DENY', 'content-security-policy': "frame-ancestors 'none'", 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' });
    }
    // The delivery is counted in its hour, and the poll cycle is a run.
    await app.intakeCounts.flush();
    const runs = JSON.parse((await get(`${url}/api/runs`, `Bearer ${TOKEN}`)).text) as { runs: { kind: string; outcome: string }[]; intake: { counts: Record<string, number> }[] };
    expect(runs.intake.at(-1)?.counts).toEqual({ stored: 1 });
    expect(runs.runs.map((r) => [r.kind, r.outcome])).toEqual([['poll', 'ok']]);
  });

  it('changes nothing on an action without the token or with a wrong one, and says so', async () => {
    const { app, url } = await daemon({ adminToken: TOKEN });
    const runs = (await app.store.history.runs({ since: 0, limit: 100 })).length;
    const actions: [string, unknown][] = [
      ['/admin/deliveries/retry', { group: { connector: 'zap', error: 'webhook.rejected (HTTP 422)' } }],
      ['/admin/deliveries/retry', { allDead: true }],
      ['/admin/sync', {}],
      ['/admin/export', {}],
    ];
    for (const authorization of [undefined, 'Bearer wrong-token-wrong-token-wrong']) {
      for (const [path, body] of actions) {
        const answer = await post(`${url}${path}`, body, authorization);
        expect(answer.status).toBe(401);
        expect(answer.json.message).toContain('Authorization: Bearer');
      }
    }
    expect((await app.outbox.list({ state: 'dead' })).map((d) => d.connector)).toEqual(['zap']);
    expect(await app.store.history.runs({ since: 0, limit: 100 })).toHaveLength(runs);
    // The right token retries the group.
    const retried = await post(`${url}/admin/deliveries/retry`, actions[0]![1], `Bearer ${TOKEN}`);
    expect(retried).toMatchObject({ status: 200, json: { retried: [expect.stringMatching(/^zap:invoices:/)] } });
  });

  it('when public, shows names but still no error text without the token; with no token set, actions do not exist', async () => {
    const { url } = await daemon({ consolePublic: true });
    const problems = await get(`${url}/api/problems`);
    expect(problems.status).toBe(200);
    expect(problems.text).toContain('webhook.rejected (HTTP 422)');
    expect(problems.text).not.toContain(ECHO);
    const page = await get(`${url}/`);
    expect(page.text).toContain('id="actions-off"');
    expect(page.text).toContain('id="dead-groups"');
    expect(page.text).not.toContain(ECHO);
    expect((await post(`${url}/admin/deliveries/retry`, { allDead: true })).status).toBe(404);
  });
});
