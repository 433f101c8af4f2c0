import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { BridgeError, describeError } from './errors.js';

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
