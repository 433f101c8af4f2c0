import {
  BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COLON, COMMA, isDigit, isJsonWhitespace, MINUS, OPEN_ARRAY, OPEN_OBJECT, QUOTE, startsNumber,
} from './chars.js';

/** Why a text is not JSON (or nests too deep), and where. */
export class JsonSyntaxError extends Error {
  /** `tooDeep`: the text may be valid JSON, but nests containers deeper than the reader allows. */
  constructor(message: string, readonly position: number, readonly tooDeep = false) {
    super(`${message} at position ${position}`);
    this.name = 'JsonSyntaxError';
  }
}

const ZERO = 0x30;
const DOT = 0x2e;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const PLUS = 0x2b;

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/**
 * A position in a JSON text and the tokens read from it, by RFC 8259's grammar and no looser than
 * `JSON.parse`: a text this cursor reads whole is one `JSON.parse` accepts, and the other way round.
 * Tokens are returned as slices of the text, so a number keeps the literal it was written with.
 * One cursor reads one text; it is the lexer beneath the canonical scan, the exact parser and the
 * member lookup of this folder.
 */
export class JsonCursor {
  pos = 0;
  /** Whether the last string read holds an escape (then its text differs from its value). */
  escaped = false;
  /** Whitespace characters skipped so far: a value that grew it while being read had some inside. */
  skipped = 0;

  constructor(readonly text: string) {}

  fail(message: string): never {
    throw new JsonSyntaxError(message, this.pos);
  }

  failTooDeep(maxDepth: number): never {
    throw new JsonSyntaxError(`nested deeper than ${maxDepth} levels`, this.pos, true);
  }

  /** The code unit at the position, NaN at the end. */
  peek(): number {
    return this.text.charCodeAt(this.pos);
  }

  /** Skips space, tab, line feed and carriage return (JSON's only whitespace); whether it skipped any. */
  whitespace(): boolean {
    const start = this.pos;
    for (;;) {
      if (!isJsonWhitespace(this.text.charCodeAt(this.pos))) break;
      this.pos++;
    }
    this.skipped += this.pos - start;
    return this.pos !== start;
  }

  expect(code: number, what: string): void {
    if (this.text.charCodeAt(this.pos) !== code) this.fail(`expected ${what}`);
    this.pos++;
  }

  /** Reads a string token and returns its text, quotes included; `escaped` says whether it had escapes. */
  string(): string {
    const { text } = this;
    const start = this.pos;
    if (text.charCodeAt(start) !== QUOTE) this.fail('expected a string');
    let escaped = false;
    let i = start + 1;
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        escaped = true;
        const next = text.charCodeAt(i + 1);
        if (next === 0x75) {
          for (let k = 2; k < 6; k++) if (!isHex(text.charCodeAt(i + k))) this.failAt(i, 'bad \\u escape');
          i += 6;
        } else if (next === QUOTE || next === BACKSLASH || next === 0x2f || next === 0x62 || next === 0x66 || next === 0x6e || next === 0x72 || next === 0x74) {
          i += 2;
        } else this.failAt(i, 'bad escape');
      } else if (c < 0x20 || Number.isNaN(c)) this.failAt(i, Number.isNaN(c) ? 'unterminated string' : 'control character in a string');
      else i++;
    }
    this.pos = i + 1;
    this.escaped = escaped;
    return text.slice(start, this.pos);
  }

  /** Reads a number token and returns its literal as written. */
  number(): string {
    const { text } = this;
    const start = this.pos;
    let i = start;
    if (text.charCodeAt(i) === MINUS) i++;
    const first = text.charCodeAt(i);
    if (first === ZERO) i++;
    else if (isDigit(first)) while (isDigit(text.charCodeAt(i))) i++;
    else this.failAt(i, 'expected a digit');
    if (text.charCodeAt(i) === DOT) {
      i++;
      if (!isDigit(text.charCodeAt(i))) this.failAt(i, 'expected a digit after "."');
      while (isDigit(text.charCodeAt(i))) i++;
    }
    const e = text.charCodeAt(i);
    if (e === LOWER_E || e === UPPER_E) {
      i++;
      const sign = text.charCodeAt(i);
      if (sign === PLUS || sign === MINUS) i++;
      if (!isDigit(text.charCodeAt(i))) this.failAt(i, 'expected a digit in the exponent');
      while (isDigit(text.charCodeAt(i))) i++;
    }
    this.pos = i;
    return text.slice(start, i);
  }

  /** Reads `true`, `false` or `null`. */
  word(): 'true' | 'false' | 'null' {
    for (const word of WORDS) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return word;
      }
    }
    return this.fail('unexpected character');
  }

  /** Skips one value of any kind, checking it; `depth` counts the containers around it. */
  skipValue(maxDepth: number, depth = 0): void {
    const c = this.peek();
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (depth >= maxDepth) this.failTooDeep(maxDepth);
      this.container(c === OPEN_OBJECT, () => this.skipValue(maxDepth, depth + 1));
    } else if (c === QUOTE) this.string();
    else if (startsNumber(c)) this.number();
    else this.word();
  }

  /**
   * Reads an object or an array whose opening bracket is at the position, calling `item` with the
   * position on each member's value (after its key: its token and whether it had escapes) or on
   * each element (key '').
   */
  container(isObject: boolean, item: (key: string, keyEscaped: boolean) => void): void {
    this.pos++;
    this.whitespace();
    const close = isObject ? CLOSE_OBJECT : CLOSE_ARRAY;
    if (this.peek() === close) {
      this.pos++;
      return;
    }
    for (;;) {
      let key = '';
      let keyEscaped = false;
      if (isObject) {
        key = this.string();
        keyEscaped = this.escaped;
        this.whitespace();
        this.expect(COLON, '":"');
        this.whitespace();
      }
      item(key, keyEscaped);
      this.whitespace();
      const c = this.peek();
      this.pos++;
      if (c === close) return;
      if (c !== COMMA) {
        this.pos--;
        this.fail(isObject ? 'expected "," or "}"' : 'expected "," or "]"');
      }
      this.whitespace();
    }
  }

  /** Fails unless only whitespace is left. */
  end(): void {
    this.whitespace();
    if (this.pos < this.text.length) this.fail('unexpected text after the value');
  }

  private failAt(position: number, message: string): never {
    this.pos = position;
    return this.fail(message);
  }
}

const WORDS = ['true', 'false', 'null'] as const;

/** A string token's value: its text without quotes when it has no escapes (the common case), else decoded. */
export function stringValue(token: string, escaped: boolean): string {
  return escaped ? (JSON.parse(token) as string) : token.slice(1, -1);
}
