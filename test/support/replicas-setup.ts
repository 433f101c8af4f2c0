import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { pino } from 'pino';
import { afterEach } from 'vitest';
import { signatureHeader } from '../../src/signature/index.js';
import type { Replica } from './replicas.js';

/**
 * What the replica tests share: the daemons' config on one PostgreSQL database, a signed webhook sender,
 * an accounting receiver and the connector's files read back. With `useCleanups()`, whatever a test
 * pushes on `cleanups` is undone after it, last first.
 */
export const SECRET = 'replicas-secret';
export const log = pino({ level: 'silent' });

export const cleanups: (() => Promise<unknown>)[] = [];

/**
 * Registers the clean-up in the calling test file: call it once, at the file's top
 * (test/support-hooks.test.ts says why not on import).
 */
export function useCleanups(): void {
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  });
}

export function listen(server: Server): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

const readBody = (req: IncomingMessage) => new Promise<string>((resolve) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => resolve(body));
});

/** The accounting receiver: answers 200 and keeps every arrival in order. */
export async function accountingReceiver() {
  const arrivals: { key: string; body: string }[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      arrivals.push({ key: String(req.headers['idempotency-key']), body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  const url = await listen(server);
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return { url, arrivals };
}

/** Posts one signed event; resolves with the status and the stored id, or undefined when the replica did not answer. */
export async function post(url: string, body: string): Promise<{ status: number; id?: string } | undefined> {
  try {
    const response = await fetch(`${url}/webhooks/v2`, {
      method: 'POST', body,
      headers: { 'content-type': 'application/json', 'webhook-signature': signatureHeader(SECRET, body, Math.floor(Date.now() / 1000)) },
      signal: AbortSignal.timeout(10_000),
    });
    const answer = (await response.json().catch(() => ({}))) as { id?: string };
    return { status: response.status, ...(answer.id ? { id: answer.id } : {}) };
  } catch {
    return undefined;
  }
}

export const jsonLines = async (file: string) => (await readFile(file, 'utf8').catch(() => '')).split('\n').filter(Boolean).map((line) => (JSON.parse(line) as { id: string }).id);

export function daemonConfig(url: string, out: string, connectors: Record<string, unknown>[] = []) {
  return {
    upstream: { baseUrl: 'sandbox', clientId: 'sandbox-client', clientSecret: SECRET },
    sandbox: { students: 2 },
    webhooks: { reconcileOnStart: false },
    poll: { onStart: false, schedule: '0 0 1 1 *' },
    export: { onStart: false, schedule: '0 0 1 1 *' },
    store: { driver: 'postgres', url, poolSize: 6 },
    connectors: [{ name: 'files', type: 'file', streams: ['invoices', 'events'], dir: out }, ...connectors],
    log: { level: 'warn', pretty: false },
  };
}

export function stopAll(replicas: Replica[]): () => Promise<unknown> {
  return () => Promise.all(replicas.map((r) => (r.alive() ? r.stop() : undefined)));
}
