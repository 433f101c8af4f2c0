import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import type { Socket as ServerSocket } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../src/app.js';
import { signatureHeader } from '../src/signature/index.js';
import { eventBody, invoice } from './support/webhooks.js';
import { capturedLogger, quietConfig } from './support/quiet-daemon.js';
import { testStore } from './support/stores.js';

/**
 * Clients that hold the daemon's connections (README "Security"): a body sent a byte at a time, a
 * connection that sends nothing, a delivery without a usable signature header, more connections
 * than the cap, and clients that go away mid-body. Each runs against the daemon app on a loopback
 * server; what a client sees is read from a raw socket.
 */
const SECRET = 'slow-secret';
/** A header that reads well (so the body would be read), whatever the body. */
const WELL_FORMED = `{"timestamp":1,"signature":"${'a'.repeat(64)}"}`;

interface LogLine {
  level: number;
  component?: string;
  msg: string;
}

const apps: App[] = [];
const sockets: Socket[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const app of apps.splice(0)) await app.stop();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** The daemon app with its log lines collected; `server` patches server.* (limits). */
async function daemon(server: Record<string, unknown> = {}) {
  const { log, lines, logged } = capturedLogger();
  const opened = await testStore('sqlite', { start: false });
  cleanups.push(opened.cleanup);
  const config = quietConfig(SECRET, opened.where, { server: { host: '127.0.0.1', port: 0, ...server } });
  const app = await createApp({ config, log, mode: 'daemon', store: opened.store });
  apps.push(app);
  await app.start();
  const { port } = new URL(app.server!.url);
  return { app, port: Number(port), lines, logged };
}

async function open(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  // Writes after the server closed the socket fail; the test reads the close, not the error.
  socket.on('error', () => {});
  await once(socket, 'connect');
  return socket;
}

/** Everything the server sent on the socket, once the socket is closed. */
function answer(socket: Socket): Promise<string> {
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  return new Promise((resolve) => socket.once('close', () => resolve(text)));
}

const head = (headers: string[]) => `POST /webhooks/v2 HTTP/1.1\r\nHost: daemon\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n${headers.map((h) => `${h}\r\n`).join('')}\r\n`;

const connections = (app: App) => new Promise<number>((resolve, reject) => app.http.server.getConnections((error, count) => (error ? reject(error) : resolve(count))));

describe('slow and idle clients', () => {
  it('a body sent a byte at a time is cut off at server.requestTimeoutMs with 408, and its connection is gone', async () => {
    const { app, port } = await daemon({ requestTimeoutMs: 300 });
    const socket = await open(port);
    const answered = answer(socket);
    socket.write(head([`Webhook-Signature: ${WELL_FORMED}`]));
    // One byte after another, never the whole body: only the server can end this.
    const trickle = setInterval(() => socket.write('x'), 10);
    const text = await answered;
    clearInterval(trickle);
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(await connections(app)).toBe(0);
    expect(await app.metrics.metrics()).toMatch(/^schoolbridge_webhook_stored_total 0$/m);
  });

  it('a connection that sends nothing is closed at server.requestTimeoutMs', async () => {
    const { app, port } = await daemon({ requestTimeoutMs: 300 });
    const text = await answer(await open(port));
    expect(text).toMatch(/^HTTP\/1\.1 408 /);
    expect(await connections(app)).toBe(0);
  });
});

describe('the signature header is checked before the body is read', () => {
  it.each([
    ['missing', []],
    ['malformed', ['Webhook-Signature: t=1,v1=abc']],
    ['malformed', ['Webhook-Signature: {"timestamp":"1","signature":"abc"}']],
  ])('%s: 401 and closed at once, with none of the body sent', async (reason, headers) => {
    // A long request timeout: an answer must not wait for it.
    const { app, port } = await daemon({ requestTimeoutMs: 60_000 });
    const socket = await open(port);
    const answered = answer(socket);
    socket.write(head(headers));
    const text = await answered;
    expect(text).toMatch(/^HTTP\/1\.1 401 /);
    expect(text).toContain(`{"error":"${reason}"}`);
    expect(await app.metrics.metrics()).toContain(`schoolbridge_webhook_rejected_total{reason="${reason}"} 1`);
  });

  it('a well-formed header lets the body be read: a delivery signed with a millisecond timestamp is stored', async () => {
    const { app } = await daemon();
    const body = eventBody('invoice.created', invoice({ id: 77 }));
    const response = await request(`${app.server!.url}/webhooks/v2`, {
      method: 'POST', body, headers: { 'webhook-signature': signatureHeader(SECRET, body, Date.now()) },
    });
    expect(response.statusCode).toBe(200);
    expect(await response.body.json()).toMatchObject({ status: 'stored' });
  });
});

describe('the cap on connections', () => {
  it('closes a connection beyond server.maxConnections as it arrives, and takes new ones once one is gone', async () => {
    const { app, port } = await daemon({ maxConnections: 2, requestTimeoutMs: 2000 });
    const serverSockets: ServerSocket[] = [];
    app.http.server.on('connection', (socket: ServerSocket) => serverSockets.push(socket));
    const dropped = once(app.http.server, 'drop');
    // Two kept-alive connections, idle after one answered request each.
    const held = [await open(port), await open(port)];
    for (const socket of held) {
      socket.write('GET /healthz HTTP/1.1\r\nHost: daemon\r\n\r\n');
      await once(socket, 'data');
    }
    const third = await open(port);
    expect(await answer(third)).toBe('');
    await dropped;
    // One goes away: the next connection is served.
    held[0]!.destroy();
    await once(serverSockets[0]!, 'close');
    const fourth = await open(port);
    fourth.write('GET /healthz HTTP/1.1\r\nHost: daemon\r\nConnection: close\r\n\r\n');
    expect(await answer(fourth)).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe('clients that go away mid-body', () => {
  it('log one debug line each, no warning', async () => {
    const { app, port, lines, logged } = await daemon();
    const COUNT = 5;
    const about = (line: LogLine) => line.component === 'webhook-intake';
    const parsed = () => lines.map((text) => JSON.parse(text) as LogLine);
    const seen = new Promise<void>((resolve) => {
      let count = parsed().filter(about).length;
      logged.on('line', (text: string) => {
        if (about(JSON.parse(text) as LogLine) && ++count === COUNT) resolve();
      });
    });
    for (let i = 0; i < COUNT; i++) {
      const socket = await open(port);
      const requested = once(app.http.server, 'request');
      socket.write(head([`Webhook-Signature: ${WELL_FORMED}`]) + '{"event":');
      // Gone once the server is reading the body.
      await requested;
      socket.destroy();
    }
    await seen;
    const intakeLines = parsed().filter(about);
    expect(intakeLines).toHaveLength(COUNT);
    expect(intakeLines.every((line) => line.level === 20 && line.msg === 'webhook delivery ended before its body arrived')).toBe(true);
    expect(parsed().filter((line) => line.level >= 40)).toEqual([]);
  });
});
