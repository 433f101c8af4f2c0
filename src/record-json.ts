import type { AnyRecord } from './records.js';

/**
 * The JSON text of a record, made once and shared: the store writes it to the WAL and the `file`
 * connector appends the same text as a line, so a webhook event is serialized once, not twice.
 * Records are immutable once made (the store's rule), so the text cannot go stale; the cache is
 * weak, so a text lives only as long as its record is queued.
 */
const texts = new WeakMap<AnyRecord, string>();

/**
 * Files `text` as the record's JSON, made by its producer (the intake builds an invoice event's two
 * records around one serialization of its object): it must be exactly JSON.stringify(record).
 */
export function rememberJson(record: AnyRecord, text: string): void {
  texts.set(record, text);
}

/** The text filed by `rememberJson`, if any (never serializes). */
export function knownJson(record: AnyRecord): string | undefined {
  return texts.get(record);
}
