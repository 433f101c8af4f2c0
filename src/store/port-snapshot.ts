import type { Key, PolledStreamName } from '../streams/index.js';
import type { StatePatch } from './port-state.js';

/** A polled stream (src/streams/): the snapshot keeps its records by key. */
export type SnapshotStream = PolledStreamName;
export type { Key } from '../streams/index.js';

/** One polled record as last seen: the chain of its last change, its JSON, the hash of its raw bytes. */
export interface SnapshotRow {
  key: Key;
  chain: string;
  body: string;
  rawHash: string | null;
}

/**
 * Every row's key and raw hash, in key order, and the snapshot version they were read at (the list
 * worker's index). Packed, so that neither reading it nor handing it to the list worker takes the
 * daemon's thread a step per row: integer keys in one Float64Array, and the hashes as one text.
 */
export interface SnapshotIndex {
  version: number;
  /** A stream of integer keys: its keys as numbers in one Float64Array; of string keys: its keys. */
  keys: Float64Array | string[];
  /** Each row's raw hash followed by a newline (a row without one: the newline alone). */
  hashes: string;
}

/**
 * Rows of a new snapshot as the list worker encodes them: row i's chain and JSON are the UTF-8
 * bytes `bytes[ends[i-1]..ends[i])`, the chain first (CHAIN_LENGTH characters of ASCII).
 */
export interface FreshRows {
  keys: Key[];
  hashes: string[];
  bytes: Uint8Array;
  ends: number[];
}

/** A staged change of one row: `body: null` deletes it; `change` is the record to deliver, if any. */
export interface StagedRow {
  key: Key;
  chain: string;
  body: string | null;
  rawHash: string | null;
  change?: { id: string; json: string };
}

export interface SnapshotStore {
  size(stream: SnapshotStream): Promise<number>;
  /** Grows with every applied cycle: a cached index of another version is stale. */
  version(stream: SnapshotStream): Promise<number>;
  index(stream: SnapshotStream): Promise<SnapshotIndex>;
  rows(stream: SnapshotStream, keys: readonly Key[]): Promise<SnapshotRow[]>;
  /**
   * The chains deleted keys left (`snapshot_gone`), by key text: kept when a change deletes a row, so
   * that the key created again later is a change of its own (newChain), not its first one repeated.
   */
  gone(stream: SnapshotStream, keys: readonly Key[]): Promise<Map<string, string>>;
  /** Rows after `after` in key order, at most `limit`. */
  scan(stream: SnapshotStream, after: Key | undefined, limit: number): Promise<SnapshotRow[]>;
  /**
   * Takes for this process the staging of every stream a cycle will stage, all or none, before it
   * stages any: a cycle that another process's cycle holds one of them from is refused (`poll.busy`)
   * holding none, so two cycles started at once never refuse each other. Each stream is given back as
   * its cycle applies or discards it.
   */
  reserve(streams: readonly SnapshotStream[]): Promise<void>;
  /**
   * A cycle writes what it found into a staging area first (a fresh snapshot on an empty stream,
   * changed rows otherwise); nothing a reader sees moves until `apply`. `begin` drops what an earlier
   * cycle left staged.
   */
  begin(stream: SnapshotStream, kind: 'fresh' | 'changes'): Promise<void>;
  stageFresh(stream: SnapshotStream, rows: FreshRows): Promise<void>;
  stageChanges(stream: SnapshotStream, rows: readonly StagedRow[]): Promise<void>;
  discard(stream: SnapshotStream): Promise<void>;
  /**
   * Makes a staged fresh snapshot the stream's snapshot, with `state`, in one transaction. With
   * `created`, every row also owes each connector a created change, delivered from a CreatedRange (port-outbox.ts).
   */
  applyFresh(stream: SnapshotStream, apply: { state: StatePatch; created?: { detectedAt: string; connectors: readonly string[]; now: number } }): Promise<void>;
  /**
   * Moves up to `limit` staged changes (key order) into the snapshot with their records, and
   * `state` with the last of them (`done`). Records of earlier created changes keep the rows they
   * were made from.
   */
  applyChanges(stream: SnapshotStream, apply: { limit: number; connectors: readonly string[]; state: StatePatch; now: number }): Promise<{ applied: number; done: boolean }>;
  /**
   * Turns up to `limit` keys of each of the stream's created ranges into deliveries of their own, the
   * text kept with them when the rows change; resolves with how many the ranges still owe. A cycle
   * does this before it changes a stream whose ranges are not delivered yet.
   */
  materializeCreated(stream: SnapshotStream, limit: number, now: number): Promise<number>;
  /** Created changes the stream's ranges still owe, all connectors. */
  createdPending(stream: SnapshotStream): Promise<number>;
}
