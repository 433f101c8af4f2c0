import { createServer } from 'node:net';

/** A TCP port that was free a moment ago (for child processes whose port we must know up front). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Polls `probe` until it returns a value other than undefined, or fails after `timeoutMs`. Only for
 * state outside this process (a child's files); in-process state is awaited through events. `what`
 * names what was awaited; as a function it is asked only once the wait has failed, so it can say
 * what a child printed meanwhile.
 */
export async function eventually<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number, what: string | (() => string)): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const named = typeof what === 'function' ? what() : what;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${named}${last ? ` (last error: ${String(last)})` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
