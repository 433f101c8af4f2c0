import type { AnyRecord } from './records.js';

/**
 * The JSON text of a record, made once and shared: the store writes it to the WAL and the `file`
 * connector appends the same text as a line, so a webhook event is serialized once, not twice.
 * Records are immutable once made (the store's rule), so the text cannot go stale; the cache is
 * weak, so a text lives only as long as its record is queued.
 */
const texts = new WeakMap<AnyRecord, string>();

/**
 * A record that makes its own JSON text without serializing (a first cycle's `created` change keeps
 * its record as the text it arrived in, poll/created-change.ts). Made on each call and not kept: a
 * kept text would be a second copy of every queued record.
 */
export const JSON_TEXT = Symbol('schoolbridge.jsonText');

interface CarriesJson {
  [JSON_TEXT](): string;
}

/**
 * Files `text` as the record's JSON, made by its producer (the intake builds an invoice event's two
 * records around one serialization of its object): it must be exactly JSON.stringify(record).
 */
export function rememberJson(record: AnyRecord, text: string): void {
  texts.set(record, text);
}

/**
 * The record's JSON text when it is had without serializing the record: filed by `rememberJson`,
 * or made by the record itself (JSON_TEXT). It reads back to the same record as JSON.stringify's.
 */
export function knownJson(record: AnyRecord): string | undefined {
  return texts.get(record) ?? (record as Partial<CarriesJson>)[JSON_TEXT]?.();
}

/** The same for any store value (a checkpoint writing a collection): undefined for what is not such a record. */
export function knownValueJson(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null ? knownJson(value as AnyRecord) : undefined;
}
