import { hash } from 'node:crypto';
import { newChain } from '../../records.js';
import type { FreshRows } from '../../store/index.js';
import { compareKeys, isKey, polledStream, type Key, type PolledStreamName, type StreamDescription } from '../../streams/index.js';
import { normalizeInPlace } from '../normalize.js';
import { invalidResponse, joinPath, validate } from '../schemas.js';
import type { PagingSigns } from './paging.js';
import { ListScanner } from './scanner.js';

/**
 * The one list pipeline (src/upstream/README.md): a full list's body turned, as its bytes arrive,
 * into each element's key, normalized text and raw hash, as the stream's description says (its
 * array's path, its schema, its key). The list worker runs it off the daemon's event loop for the
 * poll; `readList` runs it in-process. An element whose raw bytes the stored snapshot's index knows
 * is unchanged: only counted, never parsed. For a stream whose snapshot is empty (`fresh`) the
 * elements come out as finished snapshot rows in UTF-8, ready for the store.
 *
 * A malformed body, a truncated one or an element that does not fit API v2 throws the client's own
 * `upstream.*` BridgeError naming the element (`data.users[17].id`). Pure apart from hashing.
 */
export interface ParseBatch {
  /** Elements recognised by their raw bytes: unchanged since the index was read. */
  known: number;
  /** The other elements (without `fresh`): key, text (JSON.stringify order), raw hash. */
  keys: Key[];
  texts: string[];
  hashes: string[];
  /** With `fresh`: the parsed elements as snapshot rows, chain and JSON in UTF-8. */
  fresh?: FreshRows;
}

export interface ParseEnd {
  count: number;
  /** Keys of the index no element had, ascending: the deletions. */
  deleted: Key[];
  /** The first key seen twice (such a list is malformed). */
  duplicate?: Key;
}

/** Raw hash → key of every record of a snapshot, and its keys ascending (SnapshotIndex, as maps). */
export interface RawIndex {
  byHash: ReadonlyMap<string, Key>;
  keys: readonly Key[];
}

export interface ListParseOptions {
  /** The stored snapshot's index; without one every element is parsed and nothing counts as deleted. */
  index?: RawIndex | undefined;
  /** The stream's snapshot is empty: each record's row is made here (ParseBatch.fresh). */
  fresh?: { initial: Initial } | undefined;
  /** What the answer's headers say of pages (headers.ts), weighed with what its body says. */
  paging?: PagingSigns | undefined;
}

/** `poll.initial` on a stream's first cycle: its rows' chains are created changes' hashes, or the baseline padding. */
export type Initial = 'emit' | 'baseline' | undefined;

/** SHA-256 of the bytes as received: a collision would hide a change, so not a short hash. */
const rawHash = (raw: Uint8Array): string => hash('sha256', raw, 'base64');

/** Where a batch's rows are encoded before being copied out. */
let scratch = Buffer.allocUnsafeSlow(1024 * 1024);

export class ListParse {
  private readonly description: StreamDescription;
  private readonly scanner: ListScanner;
  private readonly seen = new Set<Key>();
  private readonly next = new Map<string, Key>();
  /** Hashes of the elements the index did not know, in list order, waiting for their keys. */
  private readonly declined: string[] = [];
  private known = 0;
  private duplicate: Key | undefined;

  constructor(stream: PolledStreamName, private readonly options: ListParseOptions = {}) {
    this.description = polledStream(stream);
    this.scanner = new ListScanner(this.description.list.array, (raw) => this.claim(raw), options.paging);
  }

  push(chunk: Uint8Array): ParseBatch {
    this.known = 0;
    const values = this.scanner.push(chunk);
    const { indexes, texts: received, bytes } = this.scanner;
    const keys: Key[] = [];
    const texts: string[] = [];
    const hashes: string[] = [];
    /** Per element, its UTF-8 bytes when its text is the one received. */
    const asBytes: (Uint8Array | undefined)[] = [];
    const changes = { count: 0 };
    for (let i = 0; i < values.length; i++) {
      changes.count = 0;
      const path = `${this.scanner.targetPath}[${indexes[i]}]`;
      const value = validate(this.description.schema, normalizeInPlace(values[i], changes), path) as Record<string, unknown>;
      const key = this.keyOf(value, path);
      // The text as received when it is one compact line normalization left alone (it reads back to
      // the same record): serializing it again would cost as much as parsing it.
      const asReceived = changes.count === 0 ? received[i] : undefined;
      const hashed = this.declined.shift() as string;
      // A key seen before is left out (the cycle aborts on it): one row per key reaches the store.
      if (!this.see(key)) continue;
      this.next.set(hashed, key);
      keys.push(key);
      texts.push(asReceived ?? JSON.stringify(value));
      hashes.push(hashed);
      asBytes.push(asReceived === undefined ? undefined : bytes[i]);
    }
    const batch = { known: this.known, keys, texts, hashes };
    if (!this.options.fresh || keys.length === 0) return batch;
    return { known: this.known, keys: [], texts: [], hashes: [], fresh: this.rows(keys, texts, hashes, asBytes, this.options.fresh.initial) };
  }

  /**
   * The rows of a fresh snapshot: chain (the created change's hash, as the diff makes it) and text,
   * encoded in one pass; a text as received is copied as the bytes it came in.
   */
  private rows(keys: Key[], texts: string[], hashes: string[], asBytes: (Uint8Array | undefined)[], initial: Initial): FreshRows {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    const bound = texts.reduce((sum, text) => sum + 12 + text.length * 3, 0);
    if (scratch.length < bound) scratch = Buffer.allocUnsafeSlow(Math.max(bound, 2 * scratch.length));
    const ends: number[] = [];
    let end = 0;
    for (let i = 0; i < keys.length; i++) {
      const text = texts[i]!;
      const chain = newChain(initial, String(keys[i]), text);
      const raw = asBytes[i];
      if (raw) {
        end += scratch.write(chain, end, 'latin1');
        scratch.set(raw, end);
        end += raw.length;
      } else {
        end += scratch.write(chain + text, end);
      }
      ends.push(end);
    }
    // Memory of its own, exactly sized: it is transferred to the daemon's thread and on to the store.
    const bytes = new Uint8Array(new ArrayBuffer(end));
    bytes.set(scratch.subarray(0, end));
    return { keys, hashes, bytes, ends };
  }

  /** Call once the body has ended; throws the error of a body that ended early. */
  end(): ParseEnd {
    this.scanner.end();
    const deleted = (this.options.index?.keys ?? []).filter((key) => !this.seen.has(key));
    return { count: this.scanner.count, deleted, ...(this.duplicate === undefined ? {} : { duplicate: this.duplicate }) };
  }

  /** This list's index: the stored one's successor once the cycle has committed it. */
  index(): RawIndex {
    return { byHash: this.next, keys: [...this.seen].sort(compareKeys) };
  }

  /** The element's key, of the type its stream's description says. */
  private keyOf(value: Record<string, unknown>, path: string): Key {
    const { field, type } = this.description.key;
    const key = value[field];
    if (!isKey(type, key)) throw invalidResponse(joinPath(path, [field]), type, key);
    return key;
  }

  /** Marks a key seen; false when it was seen before (the list is malformed). */
  private see(key: Key): boolean {
    if (this.seen.has(key)) {
      this.duplicate ??= key;
      return false;
    }
    this.seen.add(key);
    return true;
  }

  private claim(raw: Uint8Array): boolean {
    const hashed = rawHash(raw);
    const key = this.options.index?.byHash.get(hashed);
    if (key === undefined) {
      this.declined.push(hashed);
      return false;
    }
    this.known += 1;
    this.see(key);
    this.next.set(hashed, key);
    return true;
  }
}
