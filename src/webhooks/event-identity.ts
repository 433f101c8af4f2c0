import type { EventRecord } from '../records.js';
import { canonicalJson, sha256Hex } from '../canonical.js';
import type { EventBody } from './event-body.js';

/**
 * Who an event is. The body carries no event id and the signature changes with every attempt, so the
 * identity comes from signed content only: the event name, the object's id and a hash of the
 * canonical object. A redelivery therefore has the same identity, and so do its records' ids
 * (CONTRACT §3), while an update that changes any field is a new event.
 */
export interface EventIdentity {
  /** `<event>:<object id>:<12 hex>`: the inbox key, and the tail of the record ids. */
  id: string;
  event: string;
  /** `object.id` when it is a number or a string, else null (EventRecord.key). */
  key: number | string | null;
  /** The first 12 hex characters of SHA-256 over the canonical object. */
  hash: string;
}

/** Parts of an id that are safe anywhere an id goes (store keys, file lines, HTTP headers). */
const SAFE_PART = /^[A-Za-z0-9_.-]{1,100}$/;

export function identifyEvent(body: EventBody): EventIdentity {
  const rawKey = body.object.id;
  const key = typeof rawKey === 'string' || (typeof rawKey === 'number' && Number.isFinite(rawKey)) ? rawKey : null;
  const hash = sha256Hex(canonicalJson(body.object)).slice(0, 12);
  return { id: `${idPart(body.event)}:${key === null ? '_' : idPart(String(key))}:${hash}`, event: body.event, key, hash };
}

/**
 * The records of a stored event (CONTRACT §3): always one on `events`, and one on `invoices` when the
 * name starts with `invoice.`. `suffix` marks an on-purpose re-emission (`events reprocess`): the
 * same event gets new ids `…:r1`, `…:r2`, so connectors apply it again instead of skipping it.
 */
export function eventRecords(body: EventBody, identity: EventIdentity, receivedAt: string, suffix = ''): EventRecord[] {
  const first = eventRecord('events', body, identity, receivedAt, suffix);
  return body.event.startsWith('invoice.') ? [first, eventRecord('invoices', body, identity, receivedAt, suffix)] : [first];
}

function eventRecord(stream: EventRecord['stream'], body: EventBody, identity: EventIdentity, receivedAt: string, suffix: string): EventRecord {
  // Keys in this order: eventRecordJson writes them so.
  return { id: `${stream}:${identity.id}${suffix}`, stream, event: body.event, key: identity.key, receivedAt, record: body.object };
}

/**
 * Exactly `JSON.stringify(record)` for a record made by eventRecords, given `JSON.stringify(record.record)`:
 * an invoice event's two records carry the same object, which is then serialized once, not twice.
 */
export function eventRecordJson(record: EventRecord, objectJson: string): string {
  return `{"id":${JSON.stringify(record.id)},"stream":${JSON.stringify(record.stream)},"event":${JSON.stringify(record.event)},"key":${JSON.stringify(record.key)},"receivedAt":${JSON.stringify(record.receivedAt)},"record":${objectJson}}`;
}

/** The inbox id named by an operator: an inbox id as is, or a record id (`events:…`, `invoices:…`, `…:rN`). */
export function inboxIdOf(name: string): string {
  const withoutStream = name.replace(/^(events|invoices):/, '');
  return withoutStream.replace(/:r\d+$/, '');
}

/** An id part as is when it is short and plain; otherwise `~` and a hash of it (never ambiguous with a plain part). */
function idPart(text: string): string {
  return SAFE_PART.test(text) ? text : `~${sha256Hex(text).slice(0, 12)}`;
}
