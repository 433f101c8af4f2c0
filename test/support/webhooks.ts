import { TEST_NOW_MS } from './clock.js';
import type { AnyRecord } from '../../src/records.js';
import { signatureHeader } from '../../src/signature/index.js';
import type { Enqueue } from '../../src/store/index.js';
import { parseEventBody, type EventBody } from '../../src/webhooks/event-body.js';
import { identifyEvent } from '../../src/webhooks/event-identity.js';
import type { EventSink } from '../../src/webhooks/intake.js';

/**
 * Builders for webhook tests: each makes a valid thing, so a test breaks exactly one part.
 * Not used by the daemon.
 */
export const TEST_SECRET = 'test-secret';
export { TEST_NOW_MS };

export function invoice(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 1001, userId: 7, paymentFormId: 1, date: '2026-11-22 10:00:00', dayLimit: 14, place: 'Warszawa',
    statusOffice: 2, statusPrint: 2, statusOfficeName: 'paid', statusPrintName: 'paid', daysOutdated: null,
    numberId: 1, description: 'FV 1/11/2026', creatorUserId: 1, schoolId: 1, connectedId: 0,
    createdAt: '2026-11-22 10:00:00', updatedAt: '2026-11-22 10:00:00', currencyExchange: null, ...fields,
  };
}

export function eventBody(event = 'invoice.created', object: unknown = invoice()): string {
  return JSON.stringify({ event, object });
}

/** The read body of an event delivery text (throws when the intake would refuse it). */
export function readBody(text: string): EventBody {
  const parsed = parseEventBody(Buffer.from(text));
  if (!parsed.ok) throw new Error(`not an event body: ${parsed.reason}`);
  return parsed.body;
}

/** The read body of `{event, object}` as JSON.stringify writes it. */
export function bodyOf(event: string, object: unknown): EventBody {
  return readBody(JSON.stringify({ event, object }));
}

/** The inbox id the intake gives a delivery body. */
export function inboxIdFor(text: string): string {
  return identifyEvent(readBody(text)).id;
}

export interface Delivery {
  header: string;
  body: Buffer;
}

/** A delivery signed as the upstream signs it; `timestampSeconds` defaults to TEST_NOW_MS. */
export function signed(body: string | Buffer = eventBody(), options: { secret?: string; timestampSeconds?: number } = {}): Delivery {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  const timestamp = options.timestampSeconds ?? Math.floor(TEST_NOW_MS / 1000);
  return { header: signatureHeader(options.secret ?? TEST_SECRET, bytes, timestamp), body: bytes };
}

/**
 * Stands in for the outbox: plans one delivery per record to `connectors`, ordered by
 * `<stream>:<key>`, and records what it was asked. Whether a planned record was enqueued is the
 * store's answer, not the sink's: read it from `store.outbox`.
 */
export function recordingSink(connectors: readonly string[] = ['test']): EventSink & { planned: AnyRecord[]; notified: number } {
  const sink = {
    planned: [] as AnyRecord[],
    notified: 0,
    plan(records: readonly AnyRecord[], json: (record: AnyRecord) => string = (record) => JSON.stringify(record)): Enqueue[] {
      sink.planned.push(...records);
      return records.map((record) => ({ id: record.id, stream: record.stream, orderKey: `${record.stream}:${String(record.key)}`, json: json(record), connectors }));
    },
    notify() {
      sink.notified += 1;
    },
  };
  return sink;
}
