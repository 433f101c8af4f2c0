import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterEach, beforeEach } from 'vitest';
import { createUpstreamClient } from '../../src/upstream/client.js';
import type { UpstreamClient, UpstreamClientOptions } from '../../src/upstream/types.js';
import { testClock } from './clock.js';

/**
 * The upstream client's tests run against a tiny loopback stub whose answers each test scripts, one
 * per request. `useUpstreamStub()` gives each test a fresh server, routes and agent, all closed after
 * it. (Integration against the real sandbox lives in test/upstream.test.ts.)
 */
export type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

export interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** The stub of the running test; a new one for each test. */
export let server: Server;
/** Every request the stub has received in the running test, in order. */
export const seen: Seen[] = [];
let agent: Agent;
let baseUrl: string;
const routes = new Map<string, Handler[]>();

/** Scripts the next answers to `method path`, one handler per request, in order. */
export function on(method: string, path: string, ...handlers: Handler[]): void {
  routes.set(`${method} ${path}`, [...(routes.get(`${method} ${path}`) ?? []), ...handlers]);
}

export const json = (status: number, value: unknown, headers: Record<string, string> = {}): Handler => (_req, _body, res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(value));
};
export const raw = (status: number, text: string): Handler => (_req, _body, res) => {
  res.writeHead(status, { 'content-type': 'application/json' }).end(text);
};
export const reset: Handler = (req) => req.socket.destroy();

/** How many requests for `method path` (query left aside) the stub has received. */
export function count(method: string, path: string): number {
  return seen.filter((s) => s.method === method && s.url.split('?')[0] === path).length;
}

/**
 * Registers the stub's hooks in the calling test file: call it once, at the file's top
 * (test/support-hooks.test.ts says why not on import).
 */
export function useUpstreamStub(): void {
  beforeEach(async () => {
    routes.clear();
    seen.length = 0;
    server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        const key = `${req.method} ${(req.url ?? '').split('?')[0]}`;
        const handler = routes.get(key)?.shift();
        if (handler) handler(req, body, res);
        else res.writeHead(599).end('no scripted answer');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    agent = new Agent({ keepAliveTimeout: 1000 });
  });
  afterEach(async () => {
    await agent.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
}

/** A client of the stub with a static token and instant back-off sleeps, unless `overrides` say otherwise. */
export function client(overrides: Partial<UpstreamClientOptions> = {}): UpstreamClient {
  return createUpstreamClient({ baseUrl, auth: { token: 'static-token' }, dispatcher: agent, clock: testClock(1_000_000, { sleep: 'instant' }), ...overrides });
}

export const aStudent = (id: number, extra: Record<string, unknown> = {}) => ({
  id, isAdult: 0, isActive: 1, user: { id: id * 10, isArchived: 0, parentUser: { id: id * 10 + 1, parentUser: null } }, ...extra,
});
export const studentList = (...ids: number[]) => json(200, { data: { students: ids.map((id) => aStudent(id)) } });
