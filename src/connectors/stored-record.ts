import type { AnyRecord, Stream } from '../records.js';

/**
 * A record as the outbox hands it to a connector: the JSON text it was stored as (what the `file`
 * connector appends and the `webhook` connector posts, byte for byte), and the record itself, parsed
 * from that text the first time a connector reads its fields.
 */
export class StoredRecord {
  #record: AnyRecord | undefined;

  constructor(
    readonly id: string,
    readonly stream: Stream,
    readonly json: string,
  ) {}

  get record(): AnyRecord {
    return (this.#record ??= JSON.parse(this.json) as AnyRecord);
  }

  /** A record made in memory (tests, and producers that hold one): its text is JSON.stringify's. */
  static of(record: AnyRecord): StoredRecord {
    const stored = new StoredRecord(record.id, record.stream, JSON.stringify(record));
    stored.#record = record;
    return stored;
  }
}
