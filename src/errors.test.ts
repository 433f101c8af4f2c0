import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { BridgeError, describeError, reworded } from './errors.js';

describe('describeError', () => {
  it('names the code once: our codes, other libraries\' codes, and Node\'s system errors that start with theirs', async () => {
    const system = await readFile('/nonexistent/schoolbridge').catch((error: unknown) => error);
    expect(describeError(system)).toBe("ENOENT: no such file or directory, open '/nonexistent/schoolbridge'");
    expect(describeError(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }))).toBe('UND_ERR_SOCKET: other side closed');
    expect(describeError(new BridgeError('file.write_failed', 'cannot write x'))).toBe('file.write_failed: cannot write x');
    expect(describeError(new Error('plain'))).toBe('plain');
    expect(describeError('text')).toBe('text');
  });
});

describe('reworded', () => {
  it('keeps code, retryable, status, Retry-After and context; the cause is the error unless given', () => {
    const error = new BridgeError('upstream.http', 'answered 429', { retryable: true, status: 429, retryAfterMs: 5000, context: { path: 'x' } });
    const again = reworded(error, 'GET /a: answered 429');
    expect(again).toMatchObject({ code: 'upstream.http', message: 'GET /a: answered 429', retryable: true, status: 429, retryAfterMs: 5000, context: { path: 'x' }, cause: error });
    expect(reworded(error, 'm', 'root').cause).toBe('root');
  });
});
