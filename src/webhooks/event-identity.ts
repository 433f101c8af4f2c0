import type { EventRecord } from '../records.js';
import { sha256Hex } from '../canonical.js';
import { RawJson, stringifyExact } from '../json/index.js';
import type { Enqueue } from '../store/index.js';
import type { EventBody, EventKey } from './event-body.js';
import type { EventSink } from './intake.js';

/**
 * Who an event is. The body carries no event id and the signature changes with every attempt, so the
 * identity comes from signed content only: the event name, the object's id and a hash of the
 * object's canonical text. A redelivery therefore has the same identity, and so do its records' ids,
 * while an update that changes any field, or writes a number differently, is a new event.
 */
export interface EventIdentity {
  /** `<event>:<object id>:<12 hex>`: the inbox key, and the tail of the record ids. */
  id: string;
  event: string;
  /** `object.id` when it is a number or a string, else null (EventRecord.key). */
  key: EventKey;
  /** The first 12 hex characters of SHA-256 over the object's canonical text. */
  hash: string;
}

/** Parts of an id that are safe anywhere an id goes (store keys, file lines, HTTP headers). */
const SAFE_PART = /^[A-Za-z0-9_.-]{1,100}$/;

export function identifyEvent(body: EventBody): EventIdentity {
  const { key } = body;
  const hash = sha256Hex(body.canonical).slice(0, 12);
  // String() of a JsonNumber is its literal: an id beyond 2^53 is named as written.
  return { id: `${idPart(body.event)}:${key === null ? '_' : idPart(String(key))}:${hash}`, event: body.event, key, hash };
}

/**
 * The records of a stored event: always one on `events`, and one on `invoices` when the name starts
 * with `invoice.`. Each carries the object as its text (RawJson), written into the record's JSON as
 * it is. `suffix` marks an on-purpose re-emission (`events reprocess`): the same event gets new ids
 * `…:r1`, `…:r2`, so connectors apply it again instead of skipping it.
 */
export function eventRecords(body: EventBody, identity: EventIdentity, receivedAt: string, suffix = ''): EventRecord[] {
  const object = new RawJson(body.objectText);
  const first = eventRecord('events', body, identity, receivedAt, suffix, object);
  return body.event.startsWith('invoice.') ? [first, eventRecord('invoices', body, identity, receivedAt, suffix, object)] : [first];
}

function eventRecord(stream: EventRecord['stream'], body: EventBody, identity: EventIdentity, receivedAt: string, suffix: string, object: RawJson): EventRecord {
  return { id: `${stream}:${identity.id}${suffix}`, stream, event: body.event, key: identity.key, receivedAt, record: object };
}

/**
 * A record's JSON, what the outbox stores and connectors get: `stringifyExact(record)`, keys in this
 * order, with the object's text copied in, not serialized again (an invoice event's two records
 * carry the same text).
 */
export function eventRecordJson(record: EventRecord): string {
  const object = record.record instanceof RawJson ? record.record.text : stringifyExact(record.record);
  return `{"id":${JSON.stringify(record.id)},"stream":${JSON.stringify(record.stream)},"event":${JSON.stringify(record.event)},"key":${stringifyExact(record.key)},"receivedAt":${JSON.stringify(record.receivedAt)},"record":${object}}`;
}

/** What the sink enqueues for records made by eventRecords: each with its exact JSON. */
export function planEventRecords(sink: EventSink, records: readonly EventRecord[]): Enqueue[] {
  return sink.plan(records, (record) => eventRecordJson(record as EventRecord));
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
