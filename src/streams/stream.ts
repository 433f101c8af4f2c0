import type { Schema } from '../upstream/schemas.js';

/**
 * One polled stream, described once (docs/streams.md): where its full list is, what a record must
 * be, which field is its key, and what the console and Google Sheets show of it. The upstream client,
 * the poll, the records, the store's tables, the config's stream names and the sandbox read it.
 */
export type StreamDescription<Name extends string = string, Record = unknown> = {
  /** Records' `stream` and the first part of their ids, the snapshot's tables (`snapshot_<name>`), the config's name. */
  readonly name: Name;
  /** The full list: its GET path, and the keys that lead to its array in the answer (`data.students`). */
  readonly list: { readonly path: string; readonly array: readonly string[] };
  /** What an element must be once normalized (src/upstream/normalize.ts); unknown fields are kept. */
  readonly schema: Schema<Record>;
  /**
   * Polled whatever the config says, because another part reads its snapshot (the roster, the
   * accounting feed's buyers). Any other stream is polled when a connector takes it or `poll.streams`
   * lists it.
   */
  readonly alwaysPolled: boolean;
  /** The tab a Google Sheets connector upserts its records into, and its default columns (dotted path → title). */
  readonly sheets: { readonly tab: string; readonly columns: Readonly<{ [path: string]: string }> };
} & Keyed;

/**
 * The key: which field of a record holds it, and its type. Only integer-keyed streams can be people:
 * the console's name index keeps integer keys and finds a person by number.
 */
type Keyed =
  | { readonly key: { readonly field: string; readonly type: 'integer' }; readonly person?: PersonDescription }
  | { readonly key: { readonly field: string; readonly type: 'string' }; readonly person?: undefined };

/** A stream whose records are people: the console shows their names next to their records. */
export interface PersonDescription {
  /** What the console calls one record: `student 123`. */
  readonly noun: string;
  /** Where the person's user fields are in a record: `['user']` in a student, `[]` in a user. */
  readonly user: readonly string[];
}

/** Keeps the stream's name as a literal type (`'students'`, not `string`). */
export function describeStream<const Name extends string, Record>(description: StreamDescription<Name, Record>): StreamDescription<Name, Record> {
  return description;
}
