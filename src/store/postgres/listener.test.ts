import { connect, createServer, type Socket } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { testClock } from '../../../test/support/clock.js';
import { testDatabase } from '../../../test/support/pg-database.js';
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
    // Its start waits for the first attempt, which this server would hold for the connection's
    // whole timeout: the stop comes while it is still under way.
    const started = listener.start();
    await connecting;
    // Waiting for connect() alone, this never resolves.
    await expect(listener.stop()).resolves.toBeUndefined();
    await started;
  });

  it('warns once when it cannot listen, and says when it listens again', async () => {
    // PostgreSQL behind a gate that closes every connection until it is opened.
    const target = new URL(await testDatabase('listen_gate'));
    let open = false;
    const sockets = new Set<Socket>();
    const gate = createServer((socket) => {
      sockets.add(socket);
      if (!open) return void socket.destroy();
      const server = connect(Number(target.port), target.hostname);
      sockets.add(server);
      socket.pipe(server).pipe(socket);
      socket.on('error', () => server.destroy());
      server.on('error', () => socket.destroy());
    });
    await new Promise<void>((resolve) => gate.listen(0, '127.0.0.1', resolve));
    ends.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => gate.close(() => resolve()));
    });
    const url = new URL(target);
    url.port = String((gate.address() as { port: number }).port);
    const lines: { level: number; msg: string }[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as { level: number; msg: string }) });
    const clock = testClock(undefined, { sleep: 'timers' });
    const listener = createListener({ url: url.toString(), log, clock });
    ends.push(() => listener.stop());
    await listener.start();

    await expect.poll(() => clock.slept.length).toBe(1);
    clock.advance(clock.slept[0]!);
    await expect.poll(() => clock.slept.length).toBe(2);
    // Two attempts failed; the operator heard of it once.
    expect(lines.map((l) => [l.level, l.msg.split(';')[0]])).toEqual([[40, "cannot listen for other replicas' changes"]]);

    open = true;
    clock.advance(clock.slept[1]!);
    await expect.poll(() => lines.length).toBe(2);
    expect(lines[1]).toMatchObject({ level: 30, msg: "listening for other replicas' changes again" });
  });
});
