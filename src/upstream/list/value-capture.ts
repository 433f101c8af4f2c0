import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COMMA, isJsonWhitespace, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from '../../json/chars.js';

/**
 * The bytes of one JSON value as they arrive, possibly across chunks: where it ends, and whether it
 * held whitespace between its tokens. It does not check the value's syntax (JSON.parse does that
 * once it is whole); it only follows strings and brackets far enough to find the value's end.
 */
export class ValueCapture {
  kind: 'container' | 'string' | 'primitive' = 'container';
  /** Whitespace seen between the tokens of the value. */
  spaced = false;
  /** How deep the value's brackets nest (1 for `{}` or `[]`, 0 for a string or a primitive). */
  deepest = 0;
  /** The value's bytes so far. */
  size = 0;
  private segments: Uint8Array[] = [];
  private depth = 0;
  private inString = false;
  private escape = false;

  /** Starts a value whose first byte is `first`. */
  begin(first: number): void {
    this.segments = [];
    this.size = 0;
    this.inString = false;
    this.escape = false;
    this.spaced = false;
    this.depth = 0;
    this.deepest = 0;
    this.kind = first === OPEN_OBJECT || first === OPEN_ARRAY ? 'container' : first === QUOTE ? 'string' : 'primitive';
  }

  /**
   * Takes the value's bytes from `start`: resolves with the index where the bytes after the value
   * begin, or -1 when the value goes on in the next chunk (its part of this one is kept as a copy,
   * since the caller may reuse the chunk's memory).
   */
  scan(chunk: Uint8Array, start: number): number {
    const end = this.kind === 'primitive' ? scanPrimitive(chunk, start) : this.scanNested(chunk, start);
    if (end < 0) {
      this.segments.push(Uint8Array.prototype.slice.call(chunk, start));
      this.size += chunk.length - start;
      return -1;
    }
    const stop = this.kind === 'primitive' ? end : end + 1;
    this.segments.push(chunk.subarray(start, stop));
    return stop;
  }

  /** The whole value's bytes (a view of the last chunk when it fitted in one). */
  take(): Uint8Array {
    const segments = this.segments;
    this.segments = [];
    return segments.length === 1 ? (segments[0] as Uint8Array) : Buffer.concat(segments);
  }

  /**
   * Index of the byte that closes the value (quote or bracket), or -1 if it continues. Strings are
   * most of a body's bytes, so their inside is a loop of its own that looks for nothing but a quote
   * or a backslash, in plain JavaScript: a call into C++ (Buffer#indexOf) for every key and value of
   * every record costs more than it saves.
   */
  private scanNested(chunk: Uint8Array, start: number): number {
    let depth = this.depth;
    let inString = this.inString;
    let escape = this.escape;
    const string = this.kind === 'string';
    const length = chunk.length;
    let i = start;
    while (i < length) {
      if (inString) {
        if (escape) {
          escape = false;
          i++;
          continue;
        }
        let b = 0;
        while (i < length) {
          b = chunk[i] as number;
          if (b === QUOTE || b === BACKSLASH) break;
          i++;
        }
        if (i === length) break; // the string goes on in the next chunk
        i++;
        if (b === BACKSLASH) {
          escape = true; // the next byte, in this chunk or the next, is escaped
          continue;
        }
        inString = false;
        if (string) return i - 1; // strings do not nest: the first closing quote ends the value
        continue;
      }
      const b = chunk[i] as number;
      if (b === QUOTE) inString = true;
      else if (b === OPEN_OBJECT || b === OPEN_ARRAY) {
        if (++depth > this.deepest) this.deepest = depth;
      } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
        depth--;
        if (depth === 0) return i;
      } else if (isJsonWhitespace(b)) this.spaced = true;
      i++;
    }
    this.depth = depth;
    this.inString = inString;
    this.escape = escape;
    return -1;
  }
}

/** Index of the first delimiter after a number / true / false / null, or -1. */
function scanPrimitive(chunk: Uint8Array, start: number): number {
  for (let i = start; i < chunk.length; i++) {
    const b = chunk[i] as number;
    if (b === COMMA || b === CLOSE_ARRAY || b === CLOSE_OBJECT || isJsonWhitespace(b)) return i;
  }
  return -1;
}
