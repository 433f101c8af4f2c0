import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';

/** Listens on `port` (0: any the kernel gives) and closes again; resolves with the port, or undefined where it is taken. */
function tryPort(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : undefined;
      server.close(() => resolve(bound));
    });
  });
}

/** The first port of the kernel's ephemeral range, where Linux says it; undefined elsewhere. */
function ephemeralLow(): number | undefined {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isSafeInteger(low) && low > 2048 ? low : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A TCP port that was free a moment ago (for child processes whose port we must know up front). It
 * is drawn below the kernel's ephemeral range, whose ports the kernel gives to every outgoing
 * connection and every listen on port 0: the suites run side by side and make thousands of
 * connections, and one of them took a port from that range between its check here and a child's
 * listen. Below it, only another draw of the same port can take it. Elsewhere, any port the kernel gives.
 */
export async function freePort(): Promise<number> {
  const low = ephemeralLow();
  if (low !== undefined) {
    const from = Math.max(1024, low - 20_000);
    for (let attempt = 0; attempt < 20; attempt++) {
      const port = await tryPort(from + Math.floor(Math.random() * (low - from)));
      if (port !== undefined) return port;
    }
  }
  const port = await tryPort(0);
  if (port === undefined) throw new Error('no free TCP port on 127.0.0.1');
  return port;
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

/** Whether something accepts a TCP connection on the loopback `port` now. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}
