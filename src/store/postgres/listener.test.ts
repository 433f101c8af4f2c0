import { createServer, type Socket } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../clock.js';
import { createListener } from './listener.js';

const ends: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const end of ends.splice(0).reverse()) await end();
});

describe('the listener of other replicas\' changes', () => {
  it('stops while its connection is still being made', async () => {
    // A server that takes the connection, never answers its start-up, and closes it when the client
    // says goodbye: pg's connect() then never settles, though the client has ended.
    const sockets = new Set<Socket>();
    let accepted!: () => void;
    const connecting = new Promise<void>((resolve) => (accepted = resolve));
    const server = createServer((socket) => {
      sockets.add(socket);
      let chunks = 0;
      socket.on('data', () => {
        chunks += 1;
        if (chunks === 1) accepted();
        else socket.destroy();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    ends.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const { port } = server.address() as { port: number };
    const listener = createListener({ url: `postgres://u@127.0.0.1:${port}/db`, log: pino({ level: 'silent' }), clock: systemClock });
    await listener.start();
    await connecting;
    // Waiting for connect() alone, this never resolves.
    await expect(listener.stop()).resolves.toBeUndefined();
  });
});
