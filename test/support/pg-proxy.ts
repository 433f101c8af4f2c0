import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a PostgreSQL server, for a connection that breaks at a chosen moment:
 * `loseNextCommitAnswer` lets the next COMMIT a client sends reach the server, drops the server's
 * answer to it and then closes that client's connection, as a network that fails right after a
 * commit does. The client then cannot know whether its transaction committed (it did). `freeze`
 * holds every byte either way, of open connections and new ones, until `thaw` passes them on: a
 * server that froze (SIGSTOP) or a network cut, where nothing fails and nothing answers.
 */
export interface PgProxy {
  /** The URL to connect through the proxy. */
  url: string;
  /** Arms the proxy; resolves once it has dropped an answer to a COMMIT. */
  loseNextCommitAnswer(): Promise<void>;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

const COMMIT = Buffer.from('COMMIT');

export async function startPgProxy(target: string): Promise<PgProxy> {
  const to = new URL(target);
  const sockets = new Set<Socket>();
  let armed: (() => void) | undefined;
  let frozen = false;
  /** What each socket is to be sent once thawed, in order. */
  const held = new Map<Socket, Buffer[]>();
  const send = (socket: Socket, chunk: Buffer) => {
    if (!frozen) socket.write(chunk);
    else held.set(socket, [...(held.get(socket) ?? []), chunk]);
  };
  const server: Server = createServer((client) => {
    const upstream = connect(Number(to.port), to.hostname);
    sockets.add(client).add(upstream);
    let losing = false;
    client.on('data', (chunk) => {
      if (armed && chunk.includes(COMMIT)) losing = true;
      send(upstream, chunk);
    });
    upstream.on('data', (chunk) => {
      if (!losing) {
        send(client, chunk);
        return;
      }
      // The server answered the COMMIT: it committed. Its answer goes nowhere.
      const done = armed;
      armed = undefined;
      client.destroy();
      upstream.destroy();
      done?.();
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as { port: number }).port);
  return {
    url: url.toString(),
    loseNextCommitAnswer: () => new Promise<void>((resolve) => (armed = resolve)),
    freeze: () => {
      frozen = true;
    },
    thaw: () => {
      frozen = false;
      for (const [socket, chunks] of held) for (const chunk of chunks) if (!socket.destroyed) socket.write(chunk);
      held.clear();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
