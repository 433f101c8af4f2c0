import { hash } from 'node:crypto';
import { ListScanner } from '../upstream/list-scanner.js';
import { normalizeInPlace } from '../upstream/normalize.js';
import { studentSchema, userSchema, validate } from '../upstream/schemas.js';
import { newChain, type DiffContext } from './diff.js';
import { encodeEntry, type PolledStream } from './snapshot.js';

/**
 * One list body turned into record texts (issue 7): the work the list worker does off the daemon's
 * event loop. Bytes go in as they arrive; out come, per pushed chunk, the keys of records whose raw
 * bytes the previous index knew (unchanged since the last committed cycle: not parsed at all) and
 * `[key, text]` pairs of the others, parsed, normalized, validated and serialized again
 * (`JSON.stringify`, the upstream's key order: the snapshot's text form, see snapshot.ts).
 *
 * A malformed body, a truncated one or an element that does not fit API v2 throws the client's own
 * `upstream.*` BridgeError, naming the element (`data.users[17].id`); the caller commits nothing.
 * Pure apart from hashing: no I/O, no threads, so it is tested in-process (list-parse.test.ts).
 */
export interface ParseBatch {
  /** Keys recognised by their raw bytes. */
  known: string[];
  /** Flat pairs: key, text, key, text… (with `fresh`: key, snapshot entry, …) */
  parsed: string[];
  /** When parsing for an empty snapshot: the parsed records' snapshot entries, encoded. */
  fresh?: FreshEntries;
}

/**
 * On a first cycle every record is new, and its snapshot entry depends on nothing but its text: the
 * worker makes it here, off the daemon's thread, exactly as the diff would (`newChain`), with its UTF-8 bytes,
 * and sends it in place of the text (the text is the entry after its chain). One string per record
 * crosses, and the daemon keeps that very string: no second copy, no concatenation to flatten later.
 */
export interface FreshEntries {
  /** The records' entries as raw values (Op.raw), one after the other, record i's ending at rawEnds[i]. */
  raws: Uint8Array;
  rawEnds: number[];
}

export interface ListParseOptions {
  /** The index of the last committed cycle; none parses every record. */
  previous?: RawIndex | undefined;
  /** Set when the stream's snapshot is empty: each record's entry is made ready (ParseBatch.fresh). */
  fresh?: { initial: DiffContext['initial'] } | undefined;
}

/** Hash of a record's raw bytes (as the upstream sent them) → its key. */
export type RawIndex = ReadonlyMap<string, string>;

/** SHA-256: a collision would hide a change, so not a short or non-cryptographic hash. */
const rawHash = (raw: Uint8Array): string => hash('sha256', raw, 'base64');

const SCHEMAS = { students: studentSchema, users: userSchema } as const;

/** Where a batch's entries are encoded before being copied out (ListParse.entries). */
let rawScratch = Buffer.allocUnsafeSlow(1024 * 1024);

function copyOut(from: Buffer, bytes: number): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes);
  from.copy(copy, 0, 0, bytes);
  return copy;
}

export class ListParse {
  private readonly scanner: ListScanner;
  private readonly next = new Map<string, string>();
  /** Hashes of the elements declined by `known`, in list order, waiting to be parsed. */
  private readonly declined: string[] = [];
  private known: string[] = [];

  private readonly previous: RawIndex | undefined;
  private readonly fresh: ListParseOptions['fresh'];

  constructor(private readonly stream: PolledStream, options: ListParseOptions = {}) {
    this.previous = options.previous;
    this.fresh = options.fresh;
    this.scanner = new ListScanner(['data', stream], (raw) => this.claim(raw));
  }

  push(chunk: Uint8Array): ParseBatch {
    this.known = [];
    const values = this.scanner.push(chunk);
    const indexes = this.scanner.indexes;
    const texts = this.scanner.texts;
    const received = this.scanner.bytes;
    const parsed: string[] = [];
    /** Per parsed record, the UTF-8 bytes of its text when that text is the one received. */
    const bytes: (Uint8Array | undefined)[] = [];
    const changes = { count: 0 };
    for (let i = 0; i < values.length; i++) {
      changes.count = 0;
      const value = validate(SCHEMAS[this.stream], normalizeInPlace(values[i], changes), `data.${this.stream}[${indexes[i]}]`);
      const key = String(value.id);
      // The text as received when it is one compact line that normalization left alone (it reads back
      // to the same record): serializing it again would cost as much as parsing it.
      const asReceived = changes.count === 0 ? texts[i] : undefined;
      parsed.push(key, asReceived ?? JSON.stringify(value));
      bytes.push(asReceived === undefined ? undefined : received[i]);
      this.next.set(this.declined.shift() as string, key);
    }
    return { known: this.known, parsed, ...(this.fresh && parsed.length > 0 ? { fresh: this.entries(parsed, bytes, this.fresh.initial) } : {}) };
  }

  /**
   * Turns `parsed`'s texts into snapshot entries, in place, and encodes them: each entry's UTF-8
   * bytes, written raw into the WAL (Op.raw), not escaped into a JSON string.
   */
  private entries(parsed: string[], received: (Uint8Array | undefined)[], initial: DiffContext['initial']): FreshEntries {
    let bound = 0;
    const chains: string[] = [];
    for (let i = 0; i < parsed.length; i += 2) {
      const key = parsed[i] as string;
      const json = parsed[i + 1] as string;
      const chain = newChain(initial, key, json);
      chains.push(chain);
      parsed[i + 1] = encodeEntry(chain, json);
      // UTF-8 takes at most 3 bytes per UTF-16 unit.
      bound += (parsed[i + 1] as string).length * 3;
    }
    // Encoded in one pass into a scratch buffer, then copied into memory of its own, exactly sized
    // (the worker transfers it to the daemon's thread, which keeps it until the commit).
    if (rawScratch.length < bound) rawScratch = Buffer.allocUnsafeSlow(Math.max(bound, 2 * rawScratch.length));
    const rawEnds: number[] = [];
    let rawEnd = 0;
    for (let i = 0; i < parsed.length; i += 2) {
      // The entry is its chain and its text: a text as received is copied as the bytes it came in
      // (valid UTF-8, so exactly what encoding its decoded text would give), not encoded again.
      const asReceived = received[i / 2];
      let bytes: number;
      if (asReceived) {
        const chainBytes = rawScratch.write(chains[i / 2] as string, rawEnd);
        rawScratch.set(asReceived, rawEnd + chainBytes);
        bytes = chainBytes + asReceived.length;
      } else {
        bytes = rawScratch.write(parsed[i + 1] as string, rawEnd);
      }
      rawEnds.push((rawEnd += bytes));
    }
    // A chain and a JSON text that JSON.parse accepted (or JSON.stringify made): never a raw newline or
    // zero byte (Op.raw). Checked on the bytes, all at once (memchr), rather than on each string
    // (rawSafe: two scans of 180 MB of text per students list). Neither letter is ever part of a
    // longer UTF-8 sequence.
    const written = rawScratch.subarray(0, rawEnd);
    const at = Math.max(written.indexOf(0x0a), written.indexOf(0x00));
    if (at >= 0) throw new Error(`snapshot entry of ${this.stream} ${parsed[2 * rawEnds.findIndex((e) => e > at)]} holds a newline or a zero byte`);
    return { raws: copyOut(rawScratch, rawEnd), rawEnds };
  }

  /** Call once the body has ended: the element count, or the error of a body that ended early. */
  end(): number {
    this.scanner.end();
    return this.scanner.count;
  }

  /** Raw hash → key of every record of this list: the next cycle's index, once this one has committed. */
  index(): RawIndex {
    return this.next;
  }

  private claim(raw: Uint8Array): boolean {
    const hashed = rawHash(raw);
    const key = this.previous?.get(hashed);
    if (key === undefined) {
      this.declined.push(hashed);
      return false;
    }
    this.known.push(key);
    this.next.set(hashed, key);
    return true;
  }
}
