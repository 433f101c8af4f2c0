import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Test helpers around the sandbox, for its own tests and for anyone testing against it: the field
 * tables of docs/upstream.md (written from the document, not from the sandbox's code), a loopback webhook
 * receiver.
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
