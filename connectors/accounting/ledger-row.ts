import { JsonNumber } from '../../src/json/index.js';
import { buyerName } from './buyer.js';
import type { FeedBodyV1 } from './feed.js';
import { dateInZone } from '../../src/local-time.js';

/**
 * The ledger's columns, in order (documented in README.md). `recordId` comes first: it is what makes a
 * row unique, and the ledger finds the ids already written by reading that column back. New columns
 * are only ever added at the end, so older files stay readable.
 */
export const LEDGER_COLUMNS = [
  'recordId', 'event', 'invoiceId', 'numberId', 'receivedAt', 'date', 'soldAt', 'paidAt', 'deliveredAt',
  'createdAt', 'updatedAt', 'statusOffice', 'statusOfficeName', 'isPaid', 'userId', 'description', 'invoice', 'buyer',
] as const;

export type LedgerColumn = (typeof LEDGER_COLUMNS)[number];

/** The column headers for people (a ledger written with `header: labels`). */
export const LEDGER_LABELS: Readonly<Record<LedgerColumn, string>> = {
  recordId: 'Record ID', event: 'Event', invoiceId: 'Invoice ID', numberId: 'Invoice number', receivedAt: 'Received at',
  date: 'Date', soldAt: 'Sold at', paidAt: 'Paid at', deliveredAt: 'Delivered at', createdAt: 'Created at',
  updatedAt: 'Updated at', statusOffice: 'Office status', statusOfficeName: 'Office status name', isPaid: 'Paid',
  userId: 'User ID', description: 'Description', invoice: 'Invoice (JSON)', buyer: 'Buyer',
};

/**
 * A cell as text: null and absent are empty, objects are JSON; strings pass through unchanged (no
 * trimming), numbers as written (a JsonNumber's literal, not a rounded double).
 */
function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || value instanceof JsonNumber) return String(value);
  return JSON.stringify(value);
}

/**
 * One ledger row for one feed body: every value already a string, in LEDGER_COLUMNS order. The
 * `invoice` column is the object's text as received (`invoiceText`), like the feed body's.
 */
export function ledgerRow(body: FeedBodyV1, invoiceText: string): string[] {
  const { invoice, derived } = body;
  const values: Record<LedgerColumn, unknown> = {
    recordId: body.recordId,
    event: body.event,
    invoiceId: body.invoiceId,
    numberId: invoice.numberId,
    receivedAt: derived.receivedAtLocal,
    date: derived.dates.date,
    soldAt: derived.dates.soldAt,
    paidAt: derived.dates.paidAt,
    deliveredAt: derived.dates.deliveredAt,
    createdAt: derived.dates.createdAt,
    updatedAt: derived.dates.updatedAt,
    statusOffice: invoice.statusOffice,
    statusOfficeName: invoice.statusOfficeName,
    isPaid: derived.isPaid,
    userId: invoice.userId,
    description: invoice.description,
    invoice: invoiceText,
    buyer: buyerName(derived.buyer),
  };
  return LEDGER_COLUMNS.map((column) => cell(values[column]));
}

export const LEDGER_FILE = /^ledger-(\d{4}-\d{2}-\d{2})\.csv$/;

/** `ledger-YYYY-MM-DD.csv`, dated by when the event was received, in the school's timezone. */
export function ledgerFileName(receivedAt: string, timeZone: string): string {
  const ms = Date.parse(receivedAt);
  // receivedAt is written by intake as ISO 8601; an unreadable one is a bug upstream of us.
  if (Number.isNaN(ms)) throw new Error(`unreadable receivedAt: ${JSON.stringify(receivedAt)}`);
  return `ledger-${dateInZone(ms, timeZone)}.csv`;
}
