import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from '../clock.js';

/**
 * Test helpers around the sandbox, for its own tests and for anyone testing against it: the field
 * tables of api-v2.md (written from the document, not from the sandbox's code), a loopback webhook
 * receiver, and a clock whose time a test sets.
 */
export const SPEC_FIELDS = {
  student: ['id', 'isAdult', 'isActive', 'createdAt', 'updatedAt', 'user'],
  user: [
    'id', 'login', 'name', 'firstName', 'lastName', 'fullname', 'systemRole', 'isArchived', 'photo', 'language',
    'tosAccepted', 'type', 'typeName', 'createdAt', 'updatedAt', 'additionalData', 'parentUser',
  ],
  additionalData: [
    'id', 'phone', 'mobile', 'email', 'skype', 'street', 'zipCode', 'city', 'country', 'post', 'province', 'pesel',
    'nipNumber', 'birthDate', 'birthPlace', 'description', 'billingName', 'billingStreet', 'billingCity',
    'billingZipCode', 'billingNipNumber', 'billingPesel', 'billingEmail', 'createdAt', 'updatedAt',
  ],
  /** AdditionalData fields that are only ever null upstream. */
  alwaysNull: [
    'country', 'post', 'province', 'pesel', 'nipNumber', 'birthDate', 'birthPlace', 'description', 'billingName',
    'billingStreet', 'billingCity', 'billingZipCode', 'billingNipNumber', 'billingPesel', 'billingEmail',
  ],
  webhook: ['id', 'event', 'callbackUrl', 'createdAt', 'updatedAt'],
  deletedWebhook: ['id', 'isDeleted', 'deletedAt'],
  invoice: [
    'id', 'userId', 'paymentFormId', 'date', 'soldAt', 'paidAt', 'deliveredAt', 'dayLimit', 'place', 'statusOffice',
    'statusPrint', 'statusOfficeName', 'statusPrintName', 'daysOutdated', 'numberId', 'description', 'creatorUserId',
    'schoolId', 'connectedId', 'createdAt', 'updatedAt', 'currencyExchange',
  ],
} as const;

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface Receiver {
  url: string;
  received: ReceivedRequest[];
  close(): Promise<void>;
}

/**
 * A loopback HTTP server that records every request and answers with `answer(request, index)`'s
 * status; `'hang'` never answers (a timeout for the caller).
 */
export async function startReceiver(answer: (request: ReceivedRequest, index: number) => number | 'hang' = () => 200): Promise<Receiver> {
  const received: ReceivedRequest[] = [];
  const server: Server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (chunk: Buffer) => parts.push(chunk));
    request.on('end', () => {
      const entry = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: Buffer.concat(parts) };
      received.push(entry);
      const status = answer(entry, received.length - 1);
      if (status === 'hang') return;
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks/v2`,
    received,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** A clock a test moves by hand; `sleep` waits for real, or with `instantSleep` moves the time and returns on the next turn. */
export interface ManualClock extends Clock {
  set(ms: number): void;
  advance(ms: number): void;
  /** Every sleep asked for, in ms. */
  readonly slept: number[];
}

export function manualClock(start = Date.UTC(2026, 10, 22, 9, 0, 0), options: { instantSleep?: boolean } = {}): ManualClock {
  let now = start;
  const slept: number[] = [];
  return {
    now: () => now,
    set: (ms) => {
      now = ms;
    },
    advance: (ms) => {
      now += ms;
    },
    slept,
    sleep(ms, signal) {
      slept.push(ms);
      if (options.instantSleep) {
        // Time jumps; the promise still settles on a later turn so a loop of sleeps cannot starve I/O.
        now += ms;
        return new Promise((resolve, reject) => setImmediate(() => (signal?.aborted ? reject(signal.reason) : resolve())));
      }
      return systemClock.sleep(ms, signal);
    },
  };
}
