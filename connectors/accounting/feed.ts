import { JsonNumber, RawJson, stringifyExact } from '../../src/json/index.js';
import type { EventRecord } from '../../src/records.js';
import type { Buyer } from './buyer.js';
import { formatIsoInZone, parseWallTime, upstreamDateTimeToIso } from '../../src/local-time.js';

/**
 * The accounting feed's body, version 1 (documented in README.md). Additions that old receivers can
 * ignore keep the version; anything that changes or removes a field bumps `schemaVersion`.
 */
export const FEED_SCHEMA_VERSION = 1;

/** Date-time fields of the invoice (docs/upstream.md); always present in `derived.dates`, null when unusable. */
export const INVOICE_DATE_FIELDS = ['date', 'soldAt', 'paidAt', 'deliveredAt', 'createdAt', 'updatedAt'] as const;

export interface FeedBodyV1 {
  schemaVersion: 1;
  /** Also the `Idempotency-Key` header: the same invoice version always has the same id. */
  recordId: string;
  event: string;
  /** As received: a JsonNumber (written as its literal) when a double cannot hold it. */
  invoiceId: number | string | JsonNumber | null;
  /** When schoolbridge received the event, ISO 8601 UTC. */
  receivedAt: string;
  /** The invoice object as the upstream sent it, unknown fields included, numbers exact; sent as its text (feedBodyJson). */
  invoice: Record<string, unknown>;
  derived: {
    timezone: string;
    /** `receivedAt` in the school's timezone. */
    receivedAtLocal: string;
    /** Each date-time field as ISO 8601 with the school's offset (null: missing or not a valid date-time). */
    dates: Record<string, string | null>;
    /** true: paid; false: a status that is not "paid"; null: no status at all (see README). */
    isPaid: boolean | null;
    /** The invoice's user among the polled users (buyer.ts); null when unknown. */
    buyer: Buyer | null;
  };
}

const PAID_STATUS = 2;

/**
 * The upstream documents one state value: `statusOffice` 2 named "paid"; other values are not shown.
 * So: paid when either says so; not paid when a status is present and says something else; unknown
 * (null) when neither is present. `paidAt` is not used: the upstream documents it as an always-present
 * (non-nullable) date-time, so its presence proves nothing about payment.
 */
export function isInvoicePaid(invoice: Record<string, unknown>): boolean | null {
  const code = invoice.statusOffice;
  const name = invoice.statusOfficeName;
  const codeKnown = typeof code === 'number' || code instanceof JsonNumber || (typeof code === 'string' && code.trim() !== '');
  const nameKnown = typeof name === 'string' && name.trim() !== '';
  if (!codeKnown && !nameKnown) return null;
  if (codeKnown && Number(code) === PAID_STATUS) return true;
  return nameKnown && name.trim().toLowerCase() === 'paid';
}

/** Every known date field, plus any other top-level field holding an upstream date-time. */
export function deriveDates(invoice: Record<string, unknown>, timeZone: string): Record<string, string | null> {
  const dates: Record<string, string | null> = {};
  for (const field of INVOICE_DATE_FIELDS) dates[field] = upstreamDateTimeToIso(invoice[field], timeZone);
  for (const [field, value] of Object.entries(invoice)) {
    if (!(field in dates) && parseWallTime(value)) dates[field] = upstreamDateTimeToIso(value, timeZone);
  }
  return dates;
}

export function isInvoiceObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Builds the body for one invoice record; the caller checks `isInvoiceObject(record.record)` first. */
export function buildFeedBody(record: EventRecord, timeZone: string, buyer: Buyer | null = null): FeedBodyV1 {
  const invoice = record.record as Record<string, unknown>;
  const received = Date.parse(record.receivedAt);
  return {
    schemaVersion: FEED_SCHEMA_VERSION,
    recordId: record.id,
    event: record.event,
    invoiceId: record.key,
    receivedAt: record.receivedAt,
    invoice,
    derived: {
      timezone: timeZone,
      receivedAtLocal: Number.isNaN(received) ? record.receivedAt : formatIsoInZone(received, timeZone),
      dates: deriveDates(invoice, timeZone),
      isPaid: isInvoicePaid(invoice),
      buyer,
    },
  };
}

/**
 * The body's JSON as it is POSTed: `invoice` is the object's text as received (`invoiceText`, from
 * the stored record), copied in rather than written again, so every number, key and escape reaches
 * the receiver as the upstream wrote it.
 */
export function feedBodyJson(body: FeedBodyV1, invoiceText: string): string {
  return stringifyExact({ ...body, invoice: new RawJson(invoiceText) });
}
