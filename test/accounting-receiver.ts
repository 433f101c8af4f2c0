import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the accounting system saw of one request. */
export interface ReceivedRequest {
  method: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The status it answered. */
  status: number;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * A loopback accounting system for tests: records every request and answers from a script (then
 * 200). Like a real receiver it deduplicates by `Idempotency-Key`: `accepted` holds each key once.
 */
export interface AccountingReceiver {
  readonly url: string;
  /** Every POST, in arrival order. */
  readonly requests: ReceivedRequest[];
  /** Every other request (the connector's HEAD check); answered from `scriptProbe`, else 200. */
  readonly probes: ReceivedRequest[];
  /** Bodies accepted (2xx), first one per Idempotency-Key, in arrival order. */
  readonly accepted: Map<string, unknown>;
  /** Answers for the next requests, in order; afterwards 200. */
  script(...answers: Answer[]): void;
  /** Answers for the next requests with this Idempotency-Key (before the general script). */
  scriptFor(key: string, ...answers: Answer[]): void;
  scriptProbe(...answers: Answer[]): void;
  /** Resolves once `count` POSTs in total have been answered. */
  waitForRequests(count: number): Promise<void>;
  close(): Promise<void>;
}

export async function startAccountingReceiver(): Promise<AccountingReceiver> {
  const requests: ReceivedRequest[] = [];
  const probes: ReceivedRequest[] = [];
  const probeAnswers: Answer[] = [];
  const accepted = new Map<string, unknown>();
  const answers: Answer[] = [];
  const answersByKey = new Map<string, Answer[]>();
  const events = new EventEmitter();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.method !== 'POST') {
        const probe = probeAnswers.shift() ?? { status: 200 };
        probes.push({ method: req.method ?? '', headers: req.headers, body, status: probe.status });
        res.writeHead(probe.status, probe.headers ?? {}).end();
        return;
      }
      const key = req.headers['idempotency-key'];
      const answer = (typeof key === 'string' ? answersByKey.get(key)?.shift() : undefined) ?? answers.shift() ?? { status: 200 };
      if (answer.status < 300 && typeof key === 'string' && !accepted.has(key) && body.length > 0) {
        accepted.set(key, JSON.parse(body.toString('utf8')));
      }
      requests.push({ method: req.method ?? '', headers: req.headers, body, status: answer.status });
      res.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? '');
      events.emit('request');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/invoices`,
    requests,
    probes,
    accepted,
    script: (...more) => void answers.push(...more),
    scriptProbe: (...more) => void probeAnswers.push(...more),
    scriptFor(key, ...more) {
      answersByKey.set(key, [...(answersByKey.get(key) ?? []), ...more]);
    },
    async waitForRequests(count) {
      while (requests.length < count) await once(events, 'request');
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
