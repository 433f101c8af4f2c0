/**
 * Which columns a tab has and what goes in each cell. The defaults are what a school office needs
 * to find a person; they leave out personal ids (PESEL, NIP), birth data, billing data and free-text
 * descriptions, and nothing secret ever reaches a record (one-time passwords are dropped upstream).
 */
import { JsonNumber, stringifyExact } from '../../src/json/index.js';
import { ROSTER_COLUMNS, type RosterRow } from '../../src/records.js';
import { POLLED_STREAMS, type PolledStreamName } from '../../src/streams/index.js';

export type Cell = string | number | boolean;

/** Titles of the connector's own columns; user columns may not take them (compared lower-case). */
export const KEY_TITLE = 'id';
export const META_TITLES = { event: 'event', status: 'status', changedAt: 'changed at', recordId: 'record id' } as const;
export const RESERVED_TITLES: readonly string[] = [KEY_TITLE, ...Object.values(META_TITLES)];

export type ColumnSource =
  | { kind: 'key' }
  | { kind: 'field'; path: string }
  | { kind: 'meta'; name: keyof typeof META_TITLES };

export interface ColumnSpec {
  title: string;
  source: ColumnSource;
}

type ColumnMap = Readonly<Record<string, string>>;

const invoice: ColumnMap = {
  numberId: 'Number', userId: 'User id', date: 'Date', soldAt: 'Sold at', paidAt: 'Paid at', dayLimit: 'Days to pay',
  daysOutdated: 'Days overdue', statusOfficeName: 'Status', statusPrintName: 'Print status', place: 'Place',
  createdAt: 'Created', updatedAt: 'Updated',
};

/** Events can be about anything, so the default keeps the whole object as JSON. */
const event: ColumnMap = { '*': 'object' };

/** A polled stream's default columns are in its description (src/streams/). */
export const DEFAULT_COLUMNS: Readonly<Record<UpsertStream, ColumnMap>> = {
  ...(Object.fromEntries(POLLED_STREAMS.map((stream) => [stream.name, stream.sheets.columns])) as Record<PolledStreamName, ColumnMap>),
  invoices: invoice,
  events: event,
};

export type UpsertStream = PolledStreamName | 'invoices' | 'events';

/** Header of a stream tab: `id`, the field columns, then the bookkeeping columns. */
export function tabColumns(stream: UpsertStream, fields: ColumnMap | undefined, onDelete: 'remove' | 'mark'): ColumnSpec[] {
  const map = fields ?? DEFAULT_COLUMNS[stream];
  const columns: ColumnSpec[] = [{ title: KEY_TITLE, source: { kind: 'key' } }];
  for (const [path, title] of Object.entries(map)) columns.push({ title, source: { kind: 'field', path } });
  const isEvent = stream === 'invoices' || stream === 'events';
  if (isEvent) columns.push({ title: META_TITLES.event, source: { kind: 'meta', name: 'event' } });
  if (!isEvent && onDelete === 'mark') columns.push({ title: META_TITLES.status, source: { kind: 'meta', name: 'status' } });
  columns.push({ title: META_TITLES.changedAt, source: { kind: 'meta', name: 'changedAt' } });
  columns.push({ title: META_TITLES.recordId, source: { kind: 'meta', name: 'recordId' } });
  return columns;
}

export interface RosterColumn { path: keyof RosterRow | string; title: string }

export function rosterColumns(fields: ColumnMap | undefined): RosterColumn[] {
  if (fields) return Object.entries(fields).map(([path, title]) => ({ path, title }));
  return ROSTER_COLUMNS.map((path) => ({ path, title: path }));
}

/** Google rejects a cell over 50,000 characters; a longer value is cut rather than failing the batch. */
export const MAX_CELL_CHARS = 50_000;

function clip(text: string): string {
  return text.length > MAX_CELL_CHARS ? `${text.slice(0, MAX_CELL_CHARS - 1)}…` : text;
}

/**
 * A value as a RAW cell: strings stay text (`00123`, `=1+1` are not parsed), null clears the cell.
 * A number a spreadsheet cannot hold as written (a JsonNumber: an id beyond 2^53, `123.4500`, `1e2`)
 * is written as its literal, as text, rather than rounded; objects are JSON with numbers as written.
 */
export function toCell(value: unknown): Cell {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return clip(value);
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof JsonNumber) return value.literal;
  return clip(stringifyExact(value));
}

export function valueAt(record: unknown, path: string): unknown {
  if (path === '*') return record;
  let current: unknown = record;
  for (const part of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}
