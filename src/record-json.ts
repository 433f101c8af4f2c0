import type { AnyRecord } from './records.js';

/**
 * The JSON text of a record, made once and shared: the store writes it to the WAL and the `file`
 * connector appends the same text as a line, so a webhook event is serialized once, not twice.
 * Records are immutable once made (the store's rule), so the text cannot go stale; the cache is
 * weak, so a text lives only as long as its record is queued.
 */
const texts = new WeakMap<AnyRecord, string>();

/** JSON.stringify(record), kept for later readers of `knownJson`. */
export function recordJson(record: AnyRecord): string {
  let text = texts.get(record);
  if (text === undefined) {
    text = JSON.stringify(record);
    texts.set(record, text);
  }
  return text;
}

/** Files `text` as the record's JSON, made by the caller: it must be exactly JSON.stringify(record). */
export function rememberJson(record: AnyRecord, text: string): void {
  texts.set(record, text);
}

/** The text made by `recordJson` earlier, if any (never serializes). */
export function knownJson(record: AnyRecord): string | undefined {
  return texts.get(record);
}
