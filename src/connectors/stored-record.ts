import { memberText, parseExact, stringifyExact } from '../json/index.js';
import type { AnyRecord, Stream } from '../records.js';

/**
 * A record as the outbox hands it to a connector: the JSON it was stored as (what the `file`
 * connector appends and the `webhook` connector posts, byte for byte), as text or as its UTF-8
 * bytes, whichever the store gave (the other is made on first use), and the record itself, parsed
 * from it the first time a connector reads its fields, with every number exact (a JsonNumber where
 * a double would round it or change how it is written).
 */
export class StoredRecord {
  #record: AnyRecord | undefined;
  #json: string | undefined;
  #bytes: Uint8Array | undefined;

  constructor(
    readonly id: string,
    readonly stream: Stream,
    body: string | Uint8Array,
  ) {
    if (typeof body === 'string') this.#json = body;
    else this.#bytes = body;
  }

  get json(): string {
    return (this.#json ??= Buffer.from(this.#bytes!.buffer, this.#bytes!.byteOffset, this.#bytes!.byteLength).toString('utf8'));
  }

  /** The JSON as UTF-8. */
  get bytes(): Uint8Array {
    return (this.#bytes ??= Buffer.from(this.#json!));
  }

  /** Whether the JSON is held as bytes (writing them needs no encoding). */
  get hasBytes(): boolean {
    return this.#bytes !== undefined;
  }

  get record(): AnyRecord {
    return (this.#record ??= parseExact(this.json) as AnyRecord);
  }

  /** The text of the record's `record` member as stored (an event's object as received), or undefined. */
  get recordText(): string | undefined {
    return memberText(this.json, 'record');
  }

  /**
   * A record made in memory (tests, and producers that hold one), as the outbox would store it: its
   * text is stringifyExact's, and `record` is read back from that text, as for any stored record.
   */
  static of(record: AnyRecord): StoredRecord {
    return new StoredRecord(record.id, record.stream, stringifyExact(record));
  }
}
