import { OPEN_ARRAY, OPEN_OBJECT, QUOTE, startsNumber } from './chars.js';
import { JsonCursor, stringValue } from './cursor.js';

/**
 * One pass over a JSON text that checks it (as strictly as `JSON.parse`, plus a nesting limit) and
 * gives, for each value, two texts made of the tokens as received:
 * - `canonical`: object keys sorted by UTF-16 code units (of repeated keys the last counts, as with
 *   `JSON.parse`), no whitespace, strings as `JSON.stringify` writes their value, numbers as written.
 *   The same content gives the same text however its keys were ordered or its strings escaped, and
 *   two numbers give the same text only when written alike: what identities are hashed from. For
 *   values whose numbers are written as `JSON.stringify` writes them, it is exactly `canonicalJson`
 *   of the parsed value (src/canonical.ts), so such identities are what they were before.
 * - `compact`: the text as received without whitespace between tokens and without dropped members
 *   (the source slice itself when it has neither): what is stored and delivered. Numbers, escapes,
 *   key order and repeated keys stay as written; a compact text never holds a line break.
 * Members whose key `drop` names are left out of both, at any depth.
 */
export interface ScannedValue {
  kind: 'object' | 'array' | 'string' | 'number' | 'word';
  canonical: string;
  compact: string;
  /** An object's members in order of appearance, dropped ones left out; empty for other kinds. */
  members: readonly ScannedMember[];
  /** A string whose token holds an escape (its value is then decoded from `compact`). */
  escaped: boolean;
}

export interface ScannedMember {
  /** The key's value (decoded). */
  key: string;
  /** The key's token as received, quotes included. */
  token: string;
  value: ScannedValue;
}

export interface ScanOptions {
  /** Containers nested deeper than this (the outermost is level 1) fail the scan. */
  maxDepth: number;
  /** Keys whose members are left out. */
  drop?: (key: string) => boolean;
}

export interface Scan {
  root: ScannedValue;
  /** How many members were left out. */
  dropped: number;
}

const NONE: readonly ScannedMember[] = [];

/** Scans one JSON text; throws a JsonSyntaxError when `JSON.parse` would, or when nested too deep. */
export function scanJson(text: string, options: ScanOptions): Scan {
  const scanner = new Scanner(new JsonCursor(text), options);
  scanner.cursor.whitespace();
  const root = scanner.value(0);
  scanner.cursor.end();
  return { root, dropped: scanner.dropped };
}

/** A string value's text: its token without quotes, or decoded when it has escapes. */
export function stringOf(value: ScannedValue): string {
  return stringValue(value.compact, value.escaped);
}

class Scanner {
  dropped = 0;

  constructor(
    readonly cursor: JsonCursor,
    private readonly options: ScanOptions,
  ) {}

  value(depth: number): ScannedValue {
    const { cursor } = this;
    const c = cursor.peek();
    if (c === OPEN_OBJECT) return this.object(depth + 1);
    if (c === OPEN_ARRAY) return this.array(depth + 1);
    if (c === QUOTE) {
      const token = cursor.string();
      const escaped = cursor.escaped;
      return { kind: 'string', canonical: escaped ? JSON.stringify(JSON.parse(token)) : token, compact: token, members: NONE, escaped };
    }
    if (startsNumber(c)) {
      const literal = cursor.number();
      return { kind: 'number', canonical: literal, compact: literal, members: NONE, escaped: false };
    }
    const word = cursor.word();
    return { kind: 'word', canonical: word, compact: word, members: NONE, escaped: false };
  }

  private object(level: number): ScannedValue {
    const members: ScannedMember[] = [];
    const compact = this.container(level, true, (token, keyEscaped) => {
      const key = stringValue(token, keyEscaped);
      const value = this.value(level);
      if (this.options.drop?.(key)) this.dropped++;
      else members.push({ key, token, value });
    }, () => `{${members.map((m) => `${m.token}:${m.value.compact}`).join(',')}}`);
    return { kind: 'object', canonical: canonicalObject(members), compact, members, escaped: false };
  }

  private array(level: number): ScannedValue {
    const items: ScannedValue[] = [];
    const compact = this.container(level, false, () => {
      items.push(this.value(level));
    }, () => `[${items.map((item) => item.compact).join(',')}]`);
    let canonical = '[';
    for (let i = 0; i < items.length; i++) canonical += (i === 0 ? '' : ',') + items[i]!.canonical;
    return { kind: 'array', canonical: `${canonical}]`, compact, members: NONE, escaped: false };
  }

  /**
   * Reads the container at the cursor (`item` for each member or element) and returns its compact
   * text: the source slice when no whitespace was skipped and nothing dropped inside it, else `rebuild()`.
   */
  private container(level: number, isObject: boolean, item: (key: string, keyEscaped: boolean) => void, rebuild: () => string): string {
    const { cursor } = this;
    if (level > this.options.maxDepth) cursor.failTooDeep(this.options.maxDepth);
    const start = cursor.pos;
    const skipped = cursor.skipped;
    const dropped = this.dropped;
    cursor.container(isObject, item);
    return skipped === cursor.skipped && dropped === this.dropped ? cursor.text.slice(start, cursor.pos) : rebuild();
  }
}

/** `{"key":value,…}` with keys sorted by code units; of repeated keys the last one counts. */
function canonicalObject(members: readonly ScannedMember[]): string {
  let sorted = members;
  for (let i = 1; i < members.length; i++) {
    if (!(members[i - 1]!.key < members[i]!.key)) {
      sorted = sortedLastWins(members);
      break;
    }
  }
  let text = '{';
  for (let i = 0; i < sorted.length; i++) {
    const member = sorted[i]!;
    const key = member.token.includes('\\') ? JSON.stringify(member.key) : member.token;
    text += (i === 0 ? '' : ',') + key + ':' + member.value.canonical;
  }
  return `${text}}`;
}

/** Sorted by key with the default string order (code units, natively compared); the last of repeated keys. */
function sortedLastWins(members: readonly ScannedMember[]): ScannedMember[] {
  const byKey = new Map<string, ScannedMember>();
  for (const member of members) byKey.set(member.key, member);
  const keys = [...byKey.keys()].sort();
  return keys.map((key) => byKey.get(key)!);
}
