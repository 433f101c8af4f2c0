import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../errors.js';
import { rejected as failure } from '../../test/support/errors.js';
import { aStudent, client, count, json, on, raw, seen, type Handler, useUpstreamStub } from '../../test/support/upstream-server.js';

useUpstreamStub();

/** How the client reads answers: timeouts, bodies it refuses, streamed lists, and each call's shape. */
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
    expect((await client({ timeoutMs: 100, retry: { maxAttempts: 1 } }).list('students')).map((s) => s.id)).toEqual([1, 2, 3, 4]);
    // undici checks a body's pauses on a coarse clock (up to ~1 s late): a pause well past that.
    on('GET', '/api/v2/students', dribble(list, 2, 1500));
    expect(await failure(client({ timeoutMs: 100, retry: { maxAttempts: 1 } }).list('students'))).toMatchObject({ code: 'upstream.timeout' });
    // Any other answer is still bounded as a whole.
    on('GET', '/api/v2/webhooks', dribble(JSON.stringify({ data: { webhooks: [] } }), 8, 40));
    expect(await failure(client({ timeoutMs: 100, retry: { maxAttempts: 1 } }).listWebhooks())).toMatchObject({ code: 'upstream.timeout' });
  });

  it('an answer that goes on past its bound is refused as too large, and not read further nor retried', async () => {
    // A students list that never ends, as fast as the socket takes it.
    let written = 0;
    on('GET', '/api/v2/students', (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":{"students":[');
      const item = `${JSON.stringify(aStudent(1))},`.repeat(100);
      const more = () => {
        while (!res.destroyed && res.write(item)) written += item.length;
        if (!res.destroyed) res.once('drain', more);
      };
      res.on('close', () => res.removeAllListeners('drain'));
      more();
    });
    const error = await failure(client({ maxListBytes: 2 * 1024 * 1024 }).list('students'));
    expect(error).toMatchObject({ code: 'upstream.too_large', retryable: false });
    expect(error.message).toBe("GET /api/v2/students: upstream's answer went past 2097152 bytes (upstream.maxListBytes: raise it if the answer is really that large), and was not read further");
    expect(count('GET', '/api/v2/students')).toBe(1);
    // The socket's buffers hold a little more than the bound: the reader stopped there.
    expect(written).toBeLessThan(16 * 1024 * 1024);
    // A compressed body is bounded as it decodes: 80 KiB of gzip that inflates to 80 MiB; any other answer at 32 MiB.
    const bomb = gzipSync(Buffer.concat([Buffer.from('{"data":{"webhooks":['), Buffer.alloc(80 * 1024 * 1024, 0x20), Buffer.from(']}}')]));
    on('GET', '/api/v2/webhooks', (_req, _body, res) => res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(bomb));
    expect(await failure(client().listWebhooks())).toMatchObject({ code: 'upstream.too_large', message: "GET /api/v2/webhooks: upstream's answer went past 33554432 bytes, and was not read further" });
    on('GET', '/api/v2/students', (_req, _body, res) => res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(bomb));
    expect(await failure(client({ maxListBytes: 2 * 1024 * 1024 }).list('students'))).toMatchObject({ code: 'upstream.too_large' });
  });

  it.each([
    ['malformed JSON', raw(200, `{"data":{"students":[${JSON.stringify(aStudent(1))},{"id":2,]}}`), 'upstream.invalid_json', undefined],
    ['HTML', raw(200, '<!DOCTYPE html><p>maintenance</p>'), 'upstream.invalid_json', undefined],
    ['missing data key', json(200, { students: [] }), 'upstream.invalid_response', 'data'],
    ['string id', json(200, { data: { students: [aStudent(1), aStudent(2, { id: '2' })] } }), 'upstream.invalid_response', 'data.students[1].id'],
    ['array where an object belongs', json(200, { data: { students: [aStudent(1, { user: [] })] } }), 'upstream.invalid_response', 'data.students[0].user'],
  ])('%s', async (_name, handler, code, path) => {
    on('GET', '/api/v2/students', handler);
    const error = await failure(client().list('students'));
    expect(error.code).toBe(code);
    if (path !== undefined) expect(error.context?.path).toBe(path);
    expect(count('GET', '/api/v2/students')).toBe(1); // a bad answer is not retried
  });

  it('names the call in an error, and what came instead of JSON', async () => {
    on('GET', '/api/v2/users', raw(200, '<html><body>maintenance</body></html>'));
    expect((await failure(client().list('users'))).message).toMatch(/^GET \/api\/v2\/users: upstream answer is not valid JSON: .+ \(HTTP 200, Content-Type application\/json\)$/);
    on('POST', '/api/v2/webhook', json(500, {}));
    expect((await failure(client({ retry: { maxAttempts: 1 } }).registerWebhook('invoice.created', 'http://h/webhooks/v2'))).message).toBe('POST /api/v2/webhook: upstream answered HTTP 500');
  });

  it('leaves the name of another call alone: the failure of the list that aborted this one', async () => {
    on('GET', '/api/v2/users', json(200, { data: { users: [] } }));
    // The poll's reader of one list stops with the other list's failure (poll/cycle.ts).
    const other = new BridgeError('upstream.http', 'GET /api/v2/students: upstream answered HTTP 429', { status: 429 });
    const reading = client({ retry: { maxAttempts: 1 } }).fetchList('users', () => Promise.reject(other));
    expect((await failure(reading)).message).toBe('GET /api/v2/students: upstream answered HTTP 429');
  });

  it('reads a list after a byte order mark', async () => {
    on('GET', '/api/v2/students', raw(200, `\uFEFF${JSON.stringify({ data: { students: [aStudent(1), aStudent(2)] } })}`));
    expect((await client().list('students')).map((s) => s.id)).toEqual([1, 2]);
  });

  /** Answers `text` with the given Content-Encoding header, its bytes as `encode` makes them. */
  const encoded = (coding: string, encode: (bytes: Buffer) => Buffer, text: string): Handler => (_req, _body, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': coding });
    res.end(encode(Buffer.from(text)));
  };

  it('decodes a compressed answer it did not ask for (a proxy that compresses anyway)', async () => {
    const list = JSON.stringify({ data: { students: [aStudent(1), aStudent(2)] } });
    on('GET', '/api/v2/students', encoded('gzip', gzipSync, list));
    expect((await client().list('students')).map((s) => s.id)).toEqual([1, 2]);
    on('GET', '/api/v2/students', encoded('br', brotliCompressSync, list));
    expect((await client().list('students')).map((s) => s.id)).toEqual([1, 2]);
    // Applied in the order listed: deflate first, then gzip; undone last first.
    on('GET', '/api/v2/students', encoded('deflate, gzip', (bytes) => gzipSync(deflateSync(bytes)), list));
    expect((await client().list('students')).map((s) => s.id)).toEqual([1, 2]);
    on('GET', '/api/v2/student', encoded('x-gzip', gzipSync, JSON.stringify({ data: { student: aStudent(7) } })));
    expect((await client().getStudent(7)).id).toBe(7);
    // The poll's reader gets the decoded bytes too.
    on('GET', '/api/v2/users', encoded('gzip', gzipSync, '{"data":{"users":[]}}'));
    const text = async (body: AsyncIterable<Buffer>) => {
      const parts: Buffer[] = [];
      for await (const part of body) parts.push(part);
      return Buffer.concat(parts).toString();
    };
    expect(await client().fetchList('users', (body) => text(body as AsyncIterable<Buffer>))).toBe('{"data":{"users":[]}}');
    expect(seen.filter((s) => s.url.startsWith('/api/v2/students')).map((s) => s.headers['accept-encoding'])).toEqual([undefined, undefined, undefined]);
  });

  it('a coding it cannot decode, or a body that is not what its coding says, is refused by name and not retried', async () => {
    const list = JSON.stringify({ data: { students: [aStudent(1)] } });
    on('GET', '/api/v2/students', encoded('zstd', (bytes) => bytes, list));
    const unknown = await failure(client().list('students'));
    expect(unknown).toMatchObject({ code: 'upstream.invalid_response', retryable: false });
    expect(unknown.message).toBe('GET /api/v2/students: upstream answered with Content-Encoding zstd, which the daemon cannot decode (it asks for none; gzip, deflate and br are decoded)');
    on('GET', '/api/v2/users', encoded('gzip', (bytes) => bytes, '{"data":{"users":[]}}'));
    const plain = await failure(client().list('users'));
    expect(plain).toMatchObject({ code: 'upstream.invalid_response', retryable: false });
    expect(plain.message).toBe("GET /api/v2/users: upstream's compressed answer cannot be decoded: incorrect header check");
    on('GET', '/api/v2/webhooks', encoded('gzip', (bytes) => gzipSync(bytes).subarray(0, 20), '{"data":{"webhooks":[]}}'));
    expect((await failure(client().listWebhooks())).message).toBe("GET /api/v2/webhooks: upstream's compressed answer cannot be decoded: unexpected end of file");
    expect([count('GET', '/api/v2/students'), count('GET', '/api/v2/users'), count('GET', '/api/v2/webhooks')]).toEqual([1, 1, 1]);
  });

  it('a list whose headers say it is one page of more is refused, the students\' and the registrations\'', async () => {
    const nine = { data: { students: Array.from({ length: 9 }, (_, i) => aStudent(i + 1)) } };
    on('GET', '/api/v2/students', json(200, nine, { 'x-total-count': '10' }));
    expect(await failure(client().list('students'))).toMatchObject({
      code: 'upstream.invalid_response', context: { path: 'data.students', sign: 'header x-total-count: 10, where the list holds 9' },
    });
    on('GET', '/api/v2/students', json(200, nine, { link: '<http://elsewhere/api/v2/students?page=2>; rel="next"' }));
    expect(await failure(client().list('students'))).toMatchObject({ context: { sign: 'header Link: rel="next"' } });
    on('GET', '/api/v2/students', json(200, nine, { 'x-total-count': '9', link: '<http://elsewhere/api/v2/students?page=1>; rel="first"' }));
    expect(await client().list('students')).toHaveLength(9);
    on('GET', '/api/v2/webhooks', json(200, { data: { webhooks: [] } }, { link: '<http://elsewhere/api/v2/webhooks?page=2>; rel="next"' }));
    expect(await failure(client().listWebhooks())).toMatchObject({ code: 'upstream.invalid_response', context: { path: 'data.webhooks', sign: 'header Link: rel="next"' } });
    on('GET', '/api/v2/webhooks', json(200, { data: { webhooks: [], pagination: { has_more: true } } }));
    expect(await failure(client().listWebhooks())).toMatchObject({ context: { sign: 'data.pagination.has_more: true' } });
  });

  it('a body cut short (length mismatch) is an error, never a partial list', async () => {
    const full = JSON.stringify({ data: { students: [aStudent(1), aStudent(2)] } });
    const cut: Handler = (_req, _body, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(full.length) });
      res.write(full.slice(0, full.length / 2));
      setImmediate(() => res.socket?.destroy());
    };
    on('GET', '/api/v2/students', cut, cut, cut, cut, cut);
    const error = await failure(client({ retry: { maxAttempts: 1 } }).list('students'));
    expect(error.code).toBe('upstream.network');
    // Reached, and its answer cut off: not "unreachable".
    expect(error.message).toMatch(/^GET \/api\/v2\/students: upstream's answer broke off before its end: /);
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
