import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Clock } from '../clock.js';
import { BridgeError } from '../errors.js';
import { createUpstreamClient } from './client.js';
import type { UpstreamClient, UpstreamClientOptions } from './types.js';
import { testClock } from '../../test/support/clock.js';
import { rejected as failure } from '../../test/support/errors.js';

/**
 * The client against a tiny loopback stub whose answers each test scripts, one per request.
 * (Integration against the real sandbox lives in test/upstream.test.ts.)
 */
type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: Server;
let agent: Agent;
let baseUrl: string;
let routes: Map<string, Handler[]>;
let seen: Seen[];

function on(method: string, path: string, ...handlers: Handler[]): void {
  routes.set(`${method} ${path}`, [...(routes.get(`${method} ${path}`) ?? []), ...handlers]);
}

const json = (status: number, value: unknown, headers: Record<string, string> = {}): Handler => (_req, _body, res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));
};
const raw = (status: number, text: string): Handler => (_req, _body, res) => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(text);
};
const reset: Handler = (req) => req.socket.destroy();

function count(method: string, path: string): number {
  return seen.filter((s) => s.method === method && s.url.split('?')[0] === path).length;
}

beforeEach(async () => {
  routes = new Map();
  seen = [];
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const key = `${req.method} ${(req.url ?? '').split('?')[0]}`;
      const handler = routes.get(key)?.shift();
      if (handler) handler(req, body, res);
      else res.writeHead(599).end('no scripted answer');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  agent = new Agent({ keepAliveTimeout: 1000 });
});

afterEach(async () => {
  await agent.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function client(overrides: Partial<UpstreamClientOptions> = {}): UpstreamClient {
  return createUpstreamClient({ baseUrl, auth: { token: 'static-token' }, dispatcher: agent, clock: testClock(1_000_000, { sleep: 'instant' }), ...overrides });
}

const aStudent = (id: number, extra: Record<string, unknown> = {}) => ({
  id, isAdult: 0, isActive: 1, user: { id: id * 10, isArchived: 0, parentUser: { id: id * 10 + 1, parentUser: null } }, ...extra,
});
const studentList = (...ids: number[]) => json(200, { data: { students: ids.map((id) => aStudent(id)) } });

describe('authorization', () => {
  it('sends the static bearer token', async () => {
    on('GET', '/api/v2/students', studentList(1, 2));
    expect((await client().listStudents()).map((s) => s.id)).toEqual([1, 2]);
    expect(seen[0]?.headers.authorization).toBe('Bearer static-token');
  });

  it('a refused static token is an auth error, asked once', async () => {
    on('GET', '/api/v2/students', json(401, { error: 'invalid_token', error_description: 'The access token is invalid' }));
    const error = await failure(client().listStudents());
    expect(error).toMatchObject({ code: 'upstream.auth', status: 401, retryable: false });
    expect(error.message).toContain('The access token is invalid');
    expect(count('GET', '/api/v2/students')).toBe(1);
  });

  it('exchanges client credentials once for many concurrent calls', async () => {
    on('POST', '/api/v2/authorize', json(200, { access_token: 'issued-1', expires_in: 2592000, token_type: 'Bearer', scope: 'administrator' }));
    for (let i = 0; i < 5; i++) on('GET', '/api/v2/webhooks', json(200, { data: { webhooks: [] } }));
    const upstream = client({ auth: { clientId: 'id', clientSecret: 's3cret' } });
    await Promise.all(Array.from({ length: 5 }, () => upstream.listWebhooks()));
    expect(count('POST', '/api/v2/authorize')).toBe(1);
    const authorize = seen.find((s) => s.url === '/api/v2/authorize');
    expect(authorize?.headers.authorization).toBe(`Basic ${Buffer.from('id:s3cret').toString('base64')}`);
    expect(authorize?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(authorize?.body).toBe('grant_type=client_credentials');
    expect(seen.filter((s) => s.url === '/api/v2/webhooks').every((s) => s.headers.authorization === 'Bearer issued-1')).toBe(true);
  });

  it('re-authorizes once on 401 and retries, also for a POST', async () => {
    on('POST', '/api/v2/authorize',
      json(200, { access_token: 'old', expires_in: 2592000 }), json(200, { access_token: 'new', expires_in: 2592000 }));
    on('POST', '/api/v2/webhook', json(401, { error: 'invalid_token' }), json(200, { data: { webhook: { id: 3, event: 'invoice.created', callbackUrl: 'http://x' } } }));
    const hook = await client({ auth: { clientId: 'id', clientSecret: 's' } }).registerWebhook('invoice.created', 'http://x');
    expect(hook.id).toBe(3);
    expect(count('POST', '/api/v2/authorize')).toBe(2);
    expect(seen.filter((s) => s.url === '/api/v2/webhook').map((s) => s.headers.authorization)).toEqual(['Bearer old', 'Bearer new']);
  });

  it('gives up after one re-authorization', async () => {
    on('POST', '/api/v2/authorize', json(200, { access_token: 'a', expires_in: 60 }), json(200, { access_token: 'b', expires_in: 60 }));
    on('GET', '/api/v2/users', json(403, { error: 'access_denied' }), json(403, { error: 'access_denied' }));
    const error = await failure(client({ auth: { clientId: 'id', clientSecret: 's' } }).listUsers());
    expect(error.code).toBe('upstream.auth');
    expect(count('POST', '/api/v2/authorize')).toBe(2);
    expect(count('GET', '/api/v2/users')).toBe(2);
  });

  it('wrong client credentials are an auth error with the upstream message', async () => {
    on('POST', '/api/v2/authorize', json(400, { error: 'invalid_client', error_description: 'Client authentication failed' }));
    const error = await failure(client({ auth: { clientId: 'id', clientSecret: 'wrong' } }).listStudents());
    expect(error).toMatchObject({ code: 'upstream.auth', status: 400 });
    expect(error.message).toContain('Client authentication failed');
    expect(count('GET', '/api/v2/students')).toBe(0);
  });

  it.each([
    [{ token: '' }],
    [{ clientId: 'id', clientSecret: '' }],
    [{ clientId: '', clientSecret: 'x' }],
  ])('no usable credentials (%j) is a config error', (auth) => {
    expect(() => client({ auth: auth as UpstreamClientOptions['auth'] })).toThrow(
      expect.objectContaining({ code: 'upstream.config', message: expect.stringContaining('upstream.clientId') }),
    );
  });
});

describe('retries', () => {
  it('retries a GET on 500 three times, then succeeds', async () => {
    const clock = testClock(1_000_000, { sleep: 'instant' });
    on('GET', '/api/v2/students', json(500, {}), json(502, {}), raw(503, '<html>busy</html>'), studentList(1));
    const students = await client({ clock, retry: { random: () => 0 } }).listStudents();
    expect(students).toHaveLength(1);
    expect(count('GET', '/api/v2/students')).toBe(4);
    expect(clock.slept).toEqual([250, 500, 1000]); // random 0 takes no jitter off: the whole 250, 500, 1000
  });

  it('honours Retry-After on 429', async () => {
    const clock = testClock(1_000_000, { sleep: 'instant' });
    on('GET', '/api/v2/users', json(429, {}, { 'retry-after': '1' }), json(200, { data: { users: [] } }));
    expect(await client({ clock }).listUsers()).toEqual([]);
    expect(clock.slept).toEqual([1000]);
  });

  it('retries network errors and 408 on GET', async () => {
    on('GET', '/api/v2/webhooks', reset, json(408, {}), json(200, { data: { webhooks: [] } }));
    expect(await client().listWebhooks()).toEqual([]);
    expect(count('GET', '/api/v2/webhooks')).toBe(3);
  });

  it('retries the idempotent webhook DELETE', async () => {
    on('DELETE', '/api/v2/webhook', json(503, {}), json(200, { data: { webhook: { id: 9, isDeleted: true, deletedAt: '2026-11-22 10:00:00' } } }));
    expect(await client().deleteWebhook(9)).toMatchObject({ id: 9, isDeleted: true });
    expect(seen.map((s) => s.url)).toEqual(['/api/v2/webhook?id=9', '/api/v2/webhook?id=9']);
  });

  it.each([
    ['POST create', (c: UpstreamClient) => c.createStudent({ firstname: 'A', lastname: 'B', email: 'a@b.c', schoolId: 1 }), 'POST', '/api/v2/student'],
    ['PATCH update', (c: UpstreamClient) => c.updateStudent(1, { firstname: 'A' }), 'PATCH', '/api/v2/student'],
    ['POST webhook', (c: UpstreamClient) => c.registerWebhook('a.b', 'http://x'), 'POST', '/api/v2/webhook'],
  ])('never retries %s on 500', async (_name, run, method, path) => {
    on(method, path, json(500, {}), json(200, {}));
    const error = await failure(run(client()));
    expect(error).toMatchObject({ code: 'upstream.http', status: 500, retryable: true });
    expect(count(method, path)).toBe(1);
  });

  it('never retries a POST whose connection dropped', async () => {
    on('POST', '/api/v2/student', reset, json(200, {}));
    const error = await failure(client().createStudent({ firstname: 'A', lastname: 'B', email: 'e', schoolId: '1' }));
    expect(error.code).toBe('upstream.network');
    expect(count('POST', '/api/v2/student')).toBe(1);
  });

  it('stops after maxAttempts with the last error', async () => {
    on('GET', '/api/v2/students', json(500, { error: { code: 'serverError', message: 'boom' } }), json(500, {}), json(500, {}));
    const error = await failure(client({ retry: { maxAttempts: 2 } }).listStudents());
    expect(error).toMatchObject({ code: 'upstream.http', status: 500 });
    expect(count('GET', '/api/v2/students')).toBe(2);
  });

  it('does not retry a 400', async () => {
    on('GET', '/api/v2/students', json(400, { error: { code: 'invalidRequest', message: 'nope' } }));
    const error = await failure(client().listStudents());
    expect(error).toMatchObject({ code: 'upstream.http', status: 400, retryable: false, context: { upstreamCode: 'invalidRequest' } });
  });

  it('an abort during back-off is upstream.aborted', async () => {
    const controller = new AbortController();
    const clock: Clock = { now: () => 0, sleep: (_ms, signal) => new Promise((_r, reject) => signal?.addEventListener('abort', () => reject(signal.reason))) };
    on('GET', '/api/v2/students', json(503, {}));
    const pending = client({ clock }).listStudents({ signal: controller.signal });
    server.once('request', () => setImmediate(() => controller.abort()));
    expect((await failure(pending)).code).toBe('upstream.aborted');
  });
});

describe('answers', () => {
  it('a slow upstream is a timeout', async () => {
    on('GET', '/api/v2/webhooks', () => undefined); // never answers
    const error = await failure(client({ timeoutMs: 100, retry: { maxAttempts: 1 } }).listWebhooks());
    expect(error).toMatchObject({ code: 'upstream.timeout', retryable: true });
  });

  /** Sends `text` in `parts` pieces, `gapMs` apart, after answering the headers at once. */
  const dribble = (text: string, parts: number, gapMs: number): Handler => (_req, _body, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const size = Math.ceil(text.length / parts);
    let at = 0;
    const next = () => {
      res.write(text.slice(at, (at += size)));
      if (at < text.length) setTimeout(next, gapMs);
      else res.end();
    };
    next();
  };

  it('a full list may take longer than timeoutMs while it keeps coming; a pause longer than timeoutMs is a timeout', async () => {
    const list = JSON.stringify({ data: { students: [aStudent(1), aStudent(2), aStudent(3), aStudent(4)] } });
    // 8 pieces 40 ms apart: ~280 ms in all, three times the 100 ms timeout, never a pause of 100 ms.
    on('GET', '/api/v2/students', dribble(list, 8, 40));
    expect((await client({ timeoutMs: 100, retry: { maxAttempts: 1 } }).listStudents()).map((s) => s.id)).toEqual([1, 2, 3, 4]);
    // undici checks a body's pauses on a coarse clock (up to ~1 s late): a pause well past that.
    on('GET', '/api/v2/students', dribble(list, 2, 1500));
    expect(await failure(client({ timeoutMs: 100, retry: { maxAttempts: 1 } }).listStudents())).toMatchObject({ code: 'upstream.timeout' });
    // Any other answer is still bounded as a whole.
    on('GET', '/api/v2/webhooks', dribble(JSON.stringify({ data: { webhooks: [] } }), 8, 40));
    expect(await failure(client({ timeoutMs: 100, retry: { maxAttempts: 1 } }).listWebhooks())).toMatchObject({ code: 'upstream.timeout' });
  });

  it.each([
    ['malformed JSON', raw(200, `{"data":{"students":[${JSON.stringify(aStudent(1))},{"id":2,]}}`), 'upstream.invalid_json', undefined],
    ['HTML', raw(200, '<!DOCTYPE html><p>maintenance</p>'), 'upstream.invalid_json', undefined],
    ['missing data key', json(200, { students: [] }), 'upstream.invalid_response', 'data'],
    ['string id', json(200, { data: { students: [aStudent(1), aStudent(2, { id: '2' })] } }), 'upstream.invalid_response', 'data.students[1].id'],
    ['array where an object belongs', json(200, { data: { students: [aStudent(1, { user: [] })] } }), 'upstream.invalid_response', 'data.students[0].user'],
  ])('%s', async (_name, handler, code, path) => {
    on('GET', '/api/v2/students', handler);
    const error = await failure(client().listStudents());
    expect(error.code).toBe(code);
    if (path !== undefined) expect(error.context?.path).toBe(path);
    expect(count('GET', '/api/v2/students')).toBe(1); // a bad answer is not retried
  });

  it('a body cut short (length mismatch) is an error, never a partial list', async () => {
    const full = JSON.stringify({ data: { students: [aStudent(1), aStudent(2)] } });
    const cut: Handler = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(full.length) });
      res.write(full.slice(0, full.length / 2));
      setImmediate(() => res.socket?.destroy());
    };
    on('GET', '/api/v2/students', cut, cut, cut, cut, cut);
    const error = await failure(client({ retry: { maxAttempts: 1 } }).listStudents());
    expect(error.code).toBe('upstream.network');
  });

  it('fetchList hands the body to read unread, and a retried attempt reads the new body from its start', async () => {
    const full = JSON.stringify({ data: { students: [aStudent(1), aStudent(2)] } });
    const cut: Handler = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(full.length) });
      res.write(full.slice(0, full.indexOf('"id":2')));
      setImmediate(() => res.socket?.destroy());
    };
    on('GET', '/api/v2/students', cut, raw(200, full));
    const reads: string[] = [];
    const text = await client({ retry: { random: () => 0 } }).fetchList('students', async (body) => {
      let received = '';
      reads.push(received);
      for await (const chunk of body) received += Buffer.from(chunk).toString();
      reads[reads.length - 1] = received;
      return received;
    });
    expect(text).toBe(full);
    expect(reads).toHaveLength(2); // the cut attempt, then the whole body again
    expect(full.startsWith(reads[0]!) && reads[0]!.length < full.length).toBe(true);
  });

  it('fetchList rejects with the error of a read that finds the body wrong, without retrying it', async () => {
    on('GET', '/api/v2/users', raw(200, '{"data":{"users":[1,'), raw(200, '{}'));
    const error = await failure(client({ retry: { random: () => 0 } }).fetchList('users', async (body) => {
      for await (const _chunk of body);
      throw new BridgeError('upstream.invalid_json', 'body ends early (truncated)');
    }));
    expect(error.code).toBe('upstream.invalid_json');
    expect(count('GET', '/api/v2/users')).toBe(1);
  });

  it("fetchList leaves what its reader threw alone: not retried, and the half-read body is dropped quietly", async () => {
    // The reader throws before it reads (as the poll does when it cannot stage): the body is still coming.
    const big = JSON.stringify({ data: { students: Array.from({ length: 3000 }, (_, i) => aStudent(i + 1)) } });
    on('GET', '/api/v2/students', raw(200, big), raw(200, big));
    const stray: unknown[] = [];
    const onStray = (error: unknown) => stray.push(error);
    process.on('uncaughtException', onStray);
    try {
      const error = await failure(client({ retry: { random: () => 0 } }).fetchList('students', async () => {
        throw new BridgeError('poll.busy', 'another process is running a poll cycle', { retryable: true });
      }));
      expect(error.code).toBe('poll.busy');
      expect(count('GET', '/api/v2/students')).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(stray).toEqual([]);
    } finally {
      process.off('uncaughtException', onStray);
    }
  });

  it('getStudent asks by ?id= and maps 404', async () => {
    on('GET', '/api/v2/student', json(200, { data: { student: aStudent(5) } }), json(404, { error: { code: 'notFound', message: 'Student was not found' } }));
    const upstream = client();
    expect((await upstream.getStudent(5)).id).toBe(5);
    const error = await failure(upstream.getStudent(6));
    expect(error).toMatchObject({ code: 'upstream.not_found', status: 404, message: expect.stringContaining('Student was not found') });
    expect(seen.map((s) => s.url)).toEqual(['/api/v2/student?id=5', '/api/v2/student?id=6']);
  });

  it('create returns the normalized student and the passwords apart', async () => {
    const answer = aStudent(8, { isAdult: '1', isActive: '1' });
    Object.assign(answer.user, { isArchived: '0', oneTimePassword: 'otp-s' });
    Object.assign(answer.user.parentUser, { isArchived: '0', oneTimePassword: 'otp-p' });
    on('POST', '/api/v2/student', json(200, { data: { student: answer } }));
    const result = await client().createStudent({ firstname: 'Ala', lastname: 'Nowak ', email: 'ala@example.com', schoolId: 3 });
    expect(result.oneTimePasswords).toEqual({ student: 'otp-s', parent: 'otp-p' });
    expect(JSON.stringify(result.student)).not.toContain('oneTimePassword');
    expect(result.student).toMatchObject({ isAdult: 1, isActive: 1, user: { isArchived: 0, parentUser: { isArchived: 0 } } });
    const request = seen[0];
    expect(request?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    for (const [name, value] of [['firstname', 'Ala'], ['lastname', 'Nowak '], ['email', 'ala@example.com'], ['schoolId', '3']]) {
      expect(request?.body).toContain(`name="${name}"\r\n\r\n${value}\r\n`);
    }
  });

  it('update PATCHes ?id= with only the given fields, urlencoded when configured', async () => {
    on('PATCH', '/api/v2/student', json(200, { data: { student: aStudent(4) } }));
    const result = await client({ formEncoding: 'urlencoded' }).updateStudent(4, { lastname: 'Kowalska' });
    expect(result.student.id).toBe(4);
    expect(result.oneTimePasswords).toEqual({});
    expect(seen[0]).toMatchObject({ url: '/api/v2/student?id=4', body: 'lastname=Kowalska' });
  });

  it('lists and registers webhooks', async () => {
    const hook = { id: 1, event: 'invoice.created', callbackUrl: 'http://127.0.0.1:8080/webhooks/v2', createdAt: 'x', updatedAt: 'y', extra: true };
    on('GET', '/api/v2/webhooks', json(200, { data: { webhooks: [hook] } }));
    on('POST', '/api/v2/webhook', json(200, { data: { webhook: hook } }));
    const upstream = client();
    expect(await upstream.listWebhooks()).toEqual([hook]);
    expect(await upstream.registerWebhook('invoice.created', hook.callbackUrl)).toEqual(hook);
  });

  it('webhooks that are not an array name the path', async () => {
    on('GET', '/api/v2/webhooks', json(200, { data: { webhooks: {} } }));
    expect((await failure(client().listWebhooks())).context).toEqual({ path: 'data.webhooks', expected: 'array', actual: 'object' });
  });
});

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
