import { CLOSE_ARRAY, CLOSE_OBJECT, COLON, COMMA, isJsonWhitespace, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from '../../json/chars.js';
import { BridgeError } from '../../errors.js';
import { invalidJson } from '../errors.js';
import { invalidResponse, joinPath } from '../schemas.js';
import { pagingSigns, refusePaged, refuseReportedError, type PagingSigns } from './paging.js';
import { ValueCapture } from './value-capture.js';

/**
 * An incremental splitter for `{"data":{"students":[ {...}, {...} ]}}` (large lists).
 *
 * A big school's list is hundreds of MB; one JSON.parse of it blocks the event loop for seconds and
 * needs the whole text in memory at once. This scanner walks the body's bytes as they arrive, opens
 * only the objects on the path to the target array, and hands each element of that array to
 * JSON.parse on its own, so the caller can yield to the event loop between elements.
 *
 * Strictness: every byte is accounted for. Values beside the path are parsed (and dropped) so a
 * syntax error anywhere is an upstream.invalid_json; a body that ends early is one too; a missing or
 * wrongly typed envelope key is an upstream.invalid_response naming its path. Never a partial list.
 *
 * Scanning bytes is safe for UTF-8: every byte of a multi-byte character is ≥ 0x80, so it can never
 * be mistaken for a quote, backslash or bracket.
 */

type ObjectState = 'keyOrEnd' | 'key' | 'colon' | 'value' | 'commaOrEnd';
type ArrayState = 'valueOrEnd' | 'value' | 'commaOrEnd';
type Frame =
  | { kind: 'object'; depth: number; state: ObjectState; key: string | undefined }
  | { kind: 'array'; state: ArrayState };

/** What a captured value is for, once complete. */
type Purpose =
  | { kind: 'key' }
  | { kind: 'element' }
  | { kind: 'skip'; path: string; key: string }
  | { kind: 'wrongType'; path: string; expected: string };

const decoder = new TextDecoder('utf-8', { fatal: true });

export class ListScanner {
  private readonly target: readonly string[];
  private readonly stack: Frame[] = [];
  private phase: 'start' | 'body' | 'done' = 'start';
  private found = false;
  /** Deepest object of the path opened so far (0 = the body itself). */
  private reached = 0;
  private out: unknown[] = [];
  private offset = 0;
  private elements = 0;
  // The value being captured (a key, an element, or a value beside the path), and its bytes.
  private purpose: Purpose | undefined;
  private readonly value = new ValueCapture();
  /** What the values beside the list (and the answer's headers) say of pages (paging.ts). */
  private readonly paging: PagingSigns;

  /**
   * `target` is the path of the array, e.g. ['data', 'students']. `known` may claim an element by
   * its raw bytes (the poll's list worker, for records unchanged since its last cycle): it is then
   * counted but not parsed or returned. `paging` is what the headers said (headers.ts).
   */
  constructor(target: readonly string[], private readonly known?: (raw: Uint8Array) => boolean, paging: PagingSigns = {}) {
    if (target.length === 0) throw new Error('ListScanner needs a non-empty target path');
    this.target = target;
    this.paging = { ...paging };
  }

  /** Elements of the array completed so far, claimed ones included. */
  get count(): number {
    return this.elements;
  }

  /** List positions of the elements last returned by push (claimed ones leave gaps). */
  indexes: number[] = [];

  /**
   * The JSON texts of the elements last returned by push, as received, when they hold no whitespace
   * between tokens (else undefined): such a text is one line that JSON.parse reads back to the element.
   */
  texts: (string | undefined)[] = [];

  /**
   * The UTF-8 bytes of each of `texts` (undefined where it is), exactly as received: valid only until
   * the next push, since they may be a view of the chunk pushed.
   */
  bytes: (Uint8Array | undefined)[] = [];

  /** The array's path as errors name it. */
  get targetPath(): string {
    return joinPath('', this.target);
  }

  /** Consumes one chunk; returns the elements completed in it, parsed, in order. */
  push(chunk: Uint8Array): unknown[] {
    this.out = [];
    this.indexes = [];
    this.texts = [];
    this.bytes = [];
    // A byte order mark before the body (servers on Windows write one) is no part of the JSON.
    let i = this.offset === 0 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf ? 3 : 0;
    while (i < chunk.length) {
      i = this.purpose === undefined ? this.structural(chunk, i) : this.capture(chunk, i);
    }
    this.offset += chunk.length;
    return this.out;
  }

  /** Call once the body has ended; throws if it ended early or never had the array. */
  end(): void {
    // A bare number or literal as the whole body ends with the stream, not with a delimiter.
    if (this.purpose !== undefined && this.value.kind === 'primitive' && this.stack.length === 0) this.finishCapture(0);
    if (this.phase !== 'done' || this.purpose !== undefined) {
      throw invalidJson(`body ends early at byte ${this.offset} (truncated)`);
    }
    if (!this.found) {
      // An answer that is only an error says which, rather than that the list is missing.
      refuseReportedError(this.targetPath, this.paging);
      // Name the first key of the path that was absent: "data" when there was no data at all.
      const depth = this.reached + 1;
      const last = depth === this.target.length;
      throw invalidResponse(joinPath('', this.target.slice(0, depth)), last ? 'array' : 'object', undefined);
    }
    refusePaged(this.targetPath, this.paging, this.elements);
  }

  private fail(detail: string, at: number): never {
    throw invalidJson(`${detail} at byte ${this.offset + at}`);
  }

  /** Handles one byte outside any capture; returns the next index. */
  private structural(chunk: Uint8Array, i: number): number {
    const b = chunk[i] as number;
    if (isJsonWhitespace(b)) return i + 1;
    if (this.phase === 'done') this.fail('unexpected data after the end of the body', i);
    if (this.phase === 'start') {
      this.phase = 'body';
      if (b === OPEN_OBJECT) {
        this.stack.push({ kind: 'object', depth: 0, state: 'keyOrEnd', key: undefined });
        return i + 1;
      }
      return this.beginCapture(chunk, i, { kind: 'wrongType', path: '(body)', expected: 'object' });
    }
    const frame = this.stack[this.stack.length - 1];
    if (frame === undefined) return this.fail('unexpected byte', i);
    return frame.kind === 'object' ? this.inObject(frame, chunk, i) : this.inArray(frame, chunk, i);
  }

  private inObject(frame: Extract<Frame, { kind: 'object' }>, chunk: Uint8Array, i: number): number {
    const b = chunk[i] as number;
    switch (frame.state) {
      case 'keyOrEnd':
      case 'key':
        if (b === QUOTE) return this.beginCapture(chunk, i, { kind: 'key' });
        if (b === CLOSE_OBJECT && frame.state === 'keyOrEnd') return this.close(i);
        return this.fail('expected a key', i);
      case 'colon':
        if (b !== COLON) this.fail('expected ":"', i);
        frame.state = 'value';
        return i + 1;
      case 'value':
        return this.objectValue(frame, chunk, i);
      case 'commaOrEnd':
        if (b === COMMA) {
          frame.state = 'key';
          return i + 1;
        }
        if (b === CLOSE_OBJECT) return this.close(i);
        return this.fail('expected "," or "}"', i);
    }
  }

  /** A value inside an object on the path: open it if it continues the path, else capture it. */
  private objectValue(frame: Extract<Frame, { kind: 'object' }>, chunk: Uint8Array, i: number): number {
    const b = chunk[i] as number;
    frame.state = 'commaOrEnd';
    if (frame.key !== this.target[frame.depth]) {
      return this.beginCapture(chunk, i, { kind: 'skip', key: frame.key!, path: joinPath('', [...this.target.slice(0, frame.depth), frame.key!]) });
    }
    const path = joinPath('', this.target.slice(0, frame.depth + 1));
    const last = frame.depth === this.target.length - 1;
    if (last && b === OPEN_ARRAY) {
      if (this.found) this.fail(`duplicate key ${path}`, i);
      this.found = true;
      this.stack.push({ kind: 'array', state: 'valueOrEnd' });
      return i + 1;
    }
    if (!last && b === OPEN_OBJECT) {
      this.reached = Math.max(this.reached, frame.depth + 1);
      this.stack.push({ kind: 'object', depth: frame.depth + 1, state: 'keyOrEnd', key: undefined });
      return i + 1;
    }
    return this.beginCapture(chunk, i, { kind: 'wrongType', path, expected: last ? 'array' : 'object' });
  }

  private inArray(frame: Extract<Frame, { kind: 'array' }>, chunk: Uint8Array, i: number): number {
    const b = chunk[i] as number;
    if (frame.state === 'commaOrEnd') {
      if (b === COMMA) {
        frame.state = 'value';
        return i + 1;
      }
      if (b === CLOSE_ARRAY) return this.close(i);
      return this.fail('expected "," or "]"', i);
    }
    if (b === CLOSE_ARRAY && frame.state === 'valueOrEnd') return this.close(i);
    frame.state = 'commaOrEnd';
    return this.beginCapture(chunk, i, { kind: 'element' });
  }

  private close(i: number): number {
    this.stack.pop();
    if (this.stack.length === 0) this.phase = 'done';
    return i + 1;
  }

  private beginCapture(chunk: Uint8Array, i: number, purpose: Purpose): number {
    this.purpose = purpose;
    this.value.begin(chunk[i] as number);
    return this.capture(chunk, i);
  }

  /** Scans a captured value from `start`; returns where structural parsing resumes. */
  private capture(chunk: Uint8Array, start: number): number {
    const stop = this.value.scan(chunk, start);
    if (stop < 0) {
      if (this.value.size > MAX_VALUE_BYTES) throw tooLargeValue(this.pathOf(this.purpose as Purpose));
      return chunk.length;
    }
    this.finishCapture(start);
    return stop;
  }

  private finishCapture(at: number): void {
    const purpose = this.purpose as Purpose;
    this.purpose = undefined;
    const bytes = this.value.take();
    if (bytes.length > MAX_VALUE_BYTES) throw tooLargeValue(this.pathOf(purpose));
    if (this.value.deepest > MAX_DEPTH) throw tooDeep(this.pathOf(purpose), this.value.deepest);
    if (purpose.kind === 'element' && this.known?.(bytes)) {
      this.elements++;
      return;
    }
    const value = this.parse(bytes, purpose, at);
    switch (purpose.kind) {
      case 'key': {
        const frame = this.stack[this.stack.length - 1];
        if (frame?.kind !== 'object' || typeof value !== 'string') return this.fail('expected a key', at);
        frame.key = value;
        frame.state = 'colon';
        return;
      }
      case 'element':
        this.indexes.push(this.elements);
        this.elements++;
        this.out.push(value);
        return;
      case 'skip':
        // Only beside the path, not inside the list's elements (those are captured whole).
        pagingSigns(this.paging, purpose.path, purpose.key, value);
        return;
      case 'wrongType':
        throw invalidResponse(purpose.path, purpose.expected, value);
    }
  }

  /** Where the value being captured is, for an error: `data.students[12]`. */
  private pathOf(purpose: Purpose): string {
    return purpose.kind === 'element' ? `${this.targetPath}[${this.elements}]` : purpose.kind === 'key' ? this.targetPath : purpose.path;
  }

  private parse(bytes: Uint8Array, purpose: Purpose, at: number): unknown {
    let text: string;
    try {
      text = decoder.decode(bytes);
    } catch (error) {
      throw invalidJson(`invalid UTF-8 near byte ${this.offset + at}`, error);
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      const where = purpose.kind === 'element' ? `${this.targetPath}[${this.elements}]` : `byte ${this.offset + at}`;
      throw invalidJson(`${(error as Error).message} (in ${where})`, error);
    }
    if (purpose.kind === 'element') {
      this.texts.push(this.value.spaced ? undefined : text);
      this.bytes.push(this.value.spaced ? undefined : bytes);
    }
    return value;
  }
}

/**
 * How deep a value may nest. API v2's records nest a few levels; the diff, the record's JSON and the
 * store's JSON functions (SQLite's stop at 1,000) walk values by recursion, and a value thousands
 * of levels deep overflowed the stack in the middle of a cycle.
 */
export const MAX_DEPTH = 64;

/**
 * The largest one value of a list answer (a record, or a value beside the list): API v2's records
 * are a few kilobytes, and parsing a value costs many times its size in memory (a 300 MB one failed
 * as "Invalid string length" after taking gigabytes).
 */
export const MAX_VALUE_BYTES = 16 * 1024 * 1024;

function tooLargeValue(path: string): BridgeError {
  return new BridgeError('upstream.too_large', `upstream answered ${path} of more than ${MAX_VALUE_BYTES} bytes; API v2's records are a few kilobytes, and a value this large is refused`, {
    retryable: false,
    context: { path },
  });
}

function tooDeep(path: string, depth: number): BridgeError {
  return new BridgeError('upstream.invalid_response', `upstream answered ${path} nested ${depth} levels deep; API v2's records nest a few levels, and a value deeper than ${MAX_DEPTH} is refused`, {
    retryable: false,
    context: { path, depth },
  });
}
