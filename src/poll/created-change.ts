import { JSON_TEXT } from '../record-json.js';
import type { ChangeRecord, FieldChange } from '../records.js';
import { CHAIN_LENGTH, type PolledStream } from './snapshot.js';

/**
 * A `created` change of a first cycle (`poll.initial: emit`) that keeps its record as the JSON text
 * the list worker sent, and parses it only when something reads `record` (a connector that needs
 * fields; the `file` connector and the WAL never do).
 *
 * Why: a first cycle emits 300,000 of these. Parsing each record on the daemon's thread to build the
 * change, then serializing it again for the WAL and the `file` connector, was most of a first cycle's
 * commit (JSON.parse 2.0 s, the heap of parsed records and its garbage collection 4.6 s, the WAL text
 * and the file lines 2.6 s). The text is a slice of the record's snapshot entry: no copy of it is made.
 *
 * JSON.stringify gives exactly what a plain ChangeRecord of the same values gives (toJSON, key order
 * included); `knownJson` gives a text reading back to the same record without parsing it (the record
 * as received: the same content, possibly spelled otherwise, e.g. `\u00f3` for `ó`).
 */
export class CreatedChange implements ChangeRecord {
  readonly id: string;
  readonly stream: PolledStream;
  readonly op = 'created' as const;
  readonly key: number;
  readonly detectedAt: string;
  readonly changes: FieldChange[] = [];
  readonly previous = null;
  readonly #text: string;
  #record: Record<string, unknown> | undefined;

  constructor(id: string, stream: PolledStream, key: number, detectedAt: string, text: string) {
    this.id = id;
    this.stream = stream;
    this.key = key;
    this.detectedAt = detectedAt;
    this.#text = text;
  }

  get record(): Record<string, unknown> {
    return (this.#record ??= JSON.parse(this.#text) as Record<string, unknown>);
  }

  /** The JSON text up to the record's; the record's text and TAIL follow ([JSON_TEXT]). */
  head(): string {
    // A template rather than JSON.stringify of an object (0.5 s over 300,000 changes): the id, the
    // stream and an ISO time hold nothing to escape; JSON.stringify of each string all the same.
    const changes = this.changes.length === 0 ? '[]' : JSON.stringify(this.changes);
    return `{"id":${JSON.stringify(this.id)},"stream":"${this.stream}","op":"created","key":${this.key},"detectedAt":${JSON.stringify(this.detectedAt)},"changes":${changes},"record":`;
  }

  static readonly TAIL = ',"previous":null}';

  toJSON(): ChangeRecord {
    const { id, stream, op, key, detectedAt, changes, record, previous } = this;
    return { id, stream, op, key, detectedAt, changes, record, previous };
  }

  [JSON_TEXT](): string {
    return this.head() + this.#text + CreatedChange.TAIL;
  }
}

/**
 * The created change of a key whose snapshot entry a first `emit` cycle wrote: its id is the entry's
 * chain (newChain in diff.ts), its record the entry's text. The same change whether the cycle
 * enqueues it or the backlog does later (backlog.ts).
 */
export function createdChangeOf(stream: PolledStream, key: string, stored: string, detectedAt: string): CreatedChange {
  return new CreatedChange(`${stream}:${key}:${stored.slice(0, CHAIN_LENGTH)}`, stream, Number(key), detectedAt, stored.slice(CHAIN_LENGTH));
}
