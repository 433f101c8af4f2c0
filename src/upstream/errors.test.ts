import { describe, expect, it } from 'vitest';
import { BridgeError } from '../errors.js';
import { errorFromStatus, errorFromThrown, parseErrorBody } from './errors.js';

describe('parseErrorBody', () => {
  it.each([
    ['flat OAuth', '{"error":"invalid_client","error_description":"Client authentication failed"}', { code: 'invalid_client', message: 'Client authentication failed' }],
    ['nested', '{"error":{"code":"notFound","message":"Student was not found"}}', { code: 'notFound', message: 'Student was not found' }],
    ['flat without description', '{"error":"invalid_token"}', { code: 'invalid_token' }],
    ['plain message', '{"message":"Server Error"}', { message: 'Server Error' }],
    ['html', '<html>502</html>', {}],
    ['empty', '', {}],
    ['json null', 'null', {}],
    ['odd nested types', '{"error":{"code":5,"message":["x"]}}', {}],
  ])('%s', (_name, text, expected) => {
    expect(parseErrorBody(text)).toEqual(expected);
  });
});

describe('errorFromStatus', () => {
  const now = Date.parse('2026-11-22T10:00:00Z');
  it.each([
    [400, 'upstream.http', false],
    [401, 'upstream.auth', false],
    [403, 'upstream.auth', false],
    [404, 'upstream.not_found', false],
    [408, 'upstream.http', true],
    [409, 'upstream.http', false],
    [429, 'upstream.http', true],
    [500, 'upstream.http', true],
    [503, 'upstream.http', true],
  ])('%i → %s (retryable %s)', (status, code, retryable) => {
    const error = errorFromStatus(status, '', undefined, now);
    expect(error).toMatchObject({ code, retryable, status });
  });

  it('carries the upstream message and code', () => {
    const error = errorFromStatus(400, `{"error":{"code":"invalidRequest","message":"Request parameter 'firstname' is missing"}}`, undefined, now);
    expect(error.message).toContain("Request parameter 'firstname' is missing");
    expect(error.context).toMatchObject({ upstreamCode: 'invalidRequest', upstreamMessage: "Request parameter 'firstname' is missing" });
  });

  it.each([
    ['seconds', '1', 1000],
    ['date', 'Sun, 22 Nov 2026 10:00:05 GMT', 5000],
    ['garbage', 'soon', undefined],
    ['a negative number', '-5', undefined],
    ['zero', '0', 0],
  ])('reads Retry-After as %s', (_name, header, expected) => {
    expect(errorFromStatus(429, '', header, now).retryAfterMs).toBe(expected);
  });

  it.each([
    ['45', 'upstream answered HTTP 429 (it asks to wait 45 s)'],
    ['99999999', 'upstream answered HTTP 429 (it asks to wait 1157 days)'],
    ['3600', 'upstream answered HTTP 429 (it asks to wait 60 min)'],
    ['0', 'upstream answered HTTP 429'],
    [undefined, 'upstream answered HTTP 429'],
  ])('says how long a Retry-After of %s asks to wait', (header, message) => {
    expect(errorFromStatus(429, '', header, now).message).toBe(message);
  });

  it('names where a redirect points, by its origin alone', () => {
    expect(errorFromStatus(301, '', undefined, now, 'https://school.example:8443/api/v2/students?token=x').message)
      .toBe("upstream answered HTTP 301 (it redirects to https://school.example:8443: is that the service's address for upstream.baseUrl?)");
    expect(errorFromStatus(302, '', undefined, now, '/elsewhere').message).toBe('upstream answered HTTP 302');
    expect(errorFromStatus(404, '', undefined, now, 'https://school.example/').message).toBe('upstream answered HTTP 404');
  });

  it('ignores Retry-After on an answer that is not retried', () => {
    expect(errorFromStatus(400, '', '5', now).retryAfterMs).toBeUndefined();
  });
});

describe('errorFromThrown', () => {
  const coded = (code: string) => Object.assign(new Error(code), { code });
  it.each([
    [coded('ECONNREFUSED'), undefined, 'upstream.network'],
    [coded('UND_ERR_SOCKET'), undefined, 'upstream.network'],
    [coded('UND_ERR_HEADERS_TIMEOUT'), undefined, 'upstream.timeout'],
    [new Error('whatever'), 'timeout', 'upstream.timeout'],
    [new Error('whatever'), 'aborted', 'upstream.aborted'],
  ] as const)('%s (%s) → %s', (error, reason, code) => {
    expect(errorFromThrown(error, reason, 1000).code).toBe(code);
  });

  it('tells a pause in the body from no answer, and names the key', () => {
    expect(errorFromThrown(coded('UND_ERR_BODY_TIMEOUT'), undefined, 2000).message).toBe("upstream's answer stopped for more than 2000 ms (upstream.timeoutMs)");
    expect(errorFromThrown(coded('UND_ERR_HEADERS_TIMEOUT'), undefined, 2000).message).toBe('upstream did not answer within 2000 ms (upstream.timeoutMs)');
  });

  it('passes BridgeErrors through and rethrows bugs', () => {
    const known = new BridgeError('upstream.invalid_json', 'x');
    expect(errorFromThrown(known, undefined, 1)).toBe(known);
    expect(() => errorFromThrown(new TypeError('oops'), undefined, 1)).toThrow(TypeError);
  });
});
