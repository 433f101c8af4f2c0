import { shortHash } from './canonical.js';
import type { JsonNumber } from './json/index.js';
import { POLLED_STREAM_NAMES, type Key, type PolledStreamName } from './streams/index.js';

/**
 * The records schoolbridge produces (README "What flows where"). Every record has a deterministic
 * `id`: the same change or event seen twice has the same id, and connectors use it as their
 * idempotency key.
 */
export type Stream = PolledStreamName | 'invoices' | 'events' | 'roster';
/** The polled streams first (src/streams/), then the webhook and export streams. */
export const STREAMS: readonly Stream[] = [...POLLED_STREAM_NAMES, 'invoices', 'events', 'roster'];

export type ChangeOp = 'created' | 'updated' | 'deleted';

export interface FieldChange {
  /** Dotted leaf path, e.g. `user.additionalData.city`. */
  path: string;
  from: unknown;
  to: unknown;
}

/**
 * Characters of a change's hash: the last part of its id (`<stream>:<key>:<hash>`), and the chain a
 * snapshot row keeps of its key's last change (docs/records.md "Record ids").
 */
export const CHAIN_LENGTH = 12;
/** The chain of a record recorded without a change (poll.initial: baseline). */
export const BASELINE_CHAIN = '-'.repeat(CHAIN_LENGTH);

/**
 * The chain of a key the snapshot does not hold: its created change's hash, or the baseline padding.
 * `gone` is the chain its last deletion left (snapshot_gone): a key deleted and created again with
 * the same content is a new change, with an id of its own.
 */
export function newChain(initial: 'emit' | 'baseline' | undefined, key: string, json: string, gone = ''): string {
  return initial === 'baseline' ? BASELINE_CHAIN : shortHash('created', key, gone, '', json);
}

/** A change detected by diffing a polled list against the snapshot. */
export interface ChangeRecord {
  id: string;
  stream: PolledStreamName;
  op: ChangeOp;
  key: Key;
  /** ISO 8601, UTC. */
  detectedAt: string;
  changes: FieldChange[];
  record: Record<string, unknown> | null;
  previous: Record<string, unknown> | null;
}

/** A verified webhook event: on `events` always, on `invoices` too when its name starts with `invoice.`. */
export interface EventRecord {
  id: string;
  stream: 'invoices' | 'events';
  event: string;
  /** `object.id` when present, else null; a JsonNumber when a double cannot give back its literal. */
  key: number | string | JsonNumber | null;
  /** ISO 8601, UTC. */
  receivedAt: string;
  /**
   * The object exactly as received, unknown fields included: made by the intake, its text (a
   * RawJson); read by a connector (StoredRecord.record), parsed with its numbers exact (parseExact).
   */
  record: unknown;
}

/** One row of the roster: a student with its user and parent contact fields, flat. */
export interface RosterRow {
  studentId: number;
  userId: number | null;
  login: string | null;
  firstName: string | null;
  lastName: string | null;
  fullname: string | null;
  email: string | null;
  phone: string | null;
  mobile: string | null;
  street: string | null;
  zipCode: string | null;
  city: string | null;
  language: string | null;
  isActive: number | null;
  isAdult: number | null;
  isArchived: number | null;
  parentUserId: number | null;
  parentFirstName: string | null;
  parentLastName: string | null;
  parentEmail: string | null;
  parentPhone: string | null;
  parentMobile: string | null;
}

/** Column order of roster exports (CSV header, Sheets header). */
export const ROSTER_COLUMNS: readonly (keyof RosterRow)[] = [
  'studentId', 'userId', 'login', 'firstName', 'lastName', 'fullname', 'email', 'phone', 'mobile',
  'street', 'zipCode', 'city', 'language', 'isActive', 'isAdult', 'isArchived',
  'parentUserId', 'parentFirstName', 'parentLastName', 'parentEmail', 'parentPhone', 'parentMobile',
];

/** The roster's column headers for people (a CSV written with `header: labels`). */
export const ROSTER_LABELS: Readonly<Record<keyof RosterRow, string>> = {
  studentId: 'Student ID', userId: 'User ID', login: 'Login', firstName: 'First name', lastName: 'Last name',
  fullname: 'Full name', email: 'E-mail', phone: 'Phone', mobile: 'Mobile', street: 'Street', zipCode: 'Postal code',
  city: 'City', language: 'Language', isActive: 'Active', isAdult: 'Adult', isArchived: 'Archived',
  parentUserId: 'Parent user ID', parentFirstName: 'Parent first name', parentLastName: 'Parent last name',
  parentEmail: 'Parent e-mail', parentPhone: 'Parent phone', parentMobile: 'Parent mobile',
};

/** A full roster export: one record per export run. */
export interface RosterRecord {
  /** `roster:<date>:<hash of rows>`: a re-run of the same export has the same id. */
  id: string;
  stream: 'roster';
  /** The export's date in the configured timezone, `YYYY-MM-DD`. */
  key: string;
  date: string;
  /** ISO 8601, UTC. */
  generatedAt: string;
  rows: RosterRow[];
}

export type AnyRecord = ChangeRecord | EventRecord | RosterRecord;

/** What a first cycle's `created` change is made of: its snapshot row as it was detected. */
export interface CreatedChangeParts {
  stream: PolledStreamName;
  key: Key;
  /** The row's chain: the change's hash, the last part of its id. */
  chain: string;
  detectedAt: string;
  /** The record's JSON: text, or its UTF-8 bytes as an engine read them (never decoded on the way to a file). */
  text: string | Uint8Array;
}

/**
 * The JSON of a created change made of its parts: what JSON.stringify gives for the ChangeRecord
 * (key order included), with the record's text as it is, so 300,000 of them are not parsed and
 * serialized again on their way to a file.
 */
export function createdChangeJson(parts: CreatedChangeParts): string {
  const body = createdChangeBody(parts);
  return typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
}

/** The same JSON, as UTF-8 bytes when the record's JSON came as bytes. */
export function createdChangeBody(parts: CreatedChangeParts): string | Uint8Array {
  const id = `${parts.stream}:${parts.key}:${parts.chain}`;
  const head = `{"id":${JSON.stringify(id)},"stream":"${parts.stream}","op":"created","key":${JSON.stringify(parts.key)},"detectedAt":${JSON.stringify(parts.detectedAt)},"changes":[],"record":`;
  const tail = ',"previous":null}';
  if (typeof parts.text === 'string') return `${head}${parts.text}${tail}`;
  // One buffer, the ASCII head and tail written as Latin-1 (a plain copy): 300,000 of these go by in a first cycle.
  if (!ASCII.test(head)) return Buffer.concat([Buffer.from(head), parts.text, Buffer.from(tail)]);
  const out = Buffer.allocUnsafe(head.length + parts.text.length + tail.length);
  out.write(head, 0, 'latin1');
  out.set(parts.text, head.length);
  out.write(tail, head.length + parts.text.length, 'latin1');
  return out;
}

/** Printable ASCII: JSON.stringify escapes control characters, so only letters past ASCII fail this. */
const ASCII = /^[ -~]*$/;
