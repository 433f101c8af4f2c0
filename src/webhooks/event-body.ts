import { JsonSyntaxError, numberOf, scanJson, stringOf, type JsonNumber, type ScannedValue } from '../json/index.js';
import { ONE_TIME_PASSWORD_FIELD } from '../upstream/normalize.js';

/**
 * Reads a verified delivery body (docs/upstream.md "Event body"): a JSON object with `event`, a non-empty
 * event name, and `object`, a JSON object. Anything else is answered 400: the signature was valid,
 * so retrying the same bytes will not help, but the sender must learn we could not take it.
 *
 * The body is read once, by one scan that checks it and keeps the object's text as received
 * (src/json/canonical-scan.ts), never parsed into numbers: an invoice id beyond 2^53 or an amount
 * written `123.4500` is stored, identified and delivered as written. A `oneTimePassword` member is
 * left out at any depth, so it is never stored or delivered.
 */
export interface EventBody {
  event: string;
  /** `object.id`: a string, a number (a JsonNumber when a double cannot give back its literal), or null. */
  key: EventKey;
  /** The object's text as received, without whitespace between tokens or one-time passwords: what its records carry. */
  objectText: string;
  /** The object's canonical text (keys sorted, numbers as written): what its identity is hashed from. */
  canonical: string;
  /** What the inbox keeps: the body as received, or, when it held one-time passwords, its compact text without them. */
  text: string;
}

export type EventKey = number | string | JsonNumber | null;

export type ParsedBody = { ok: true; body: EventBody } | { ok: false; reason: string };

/** Longest event name we accept; real ones look like `invoice.created`. */
const MAX_EVENT_LENGTH = 200;
/** Hashing, storing and delivering never recurse deeper than this: a hostile nesting is a 400 here. */
const MAX_DEPTH = 64;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
const dropOneTimePassword = (key: string) => key === ONE_TIME_PASSWORD_FIELD;

export function parseEventBody(raw: Uint8Array): ParsedBody {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    return { ok: false, reason: 'body is not UTF-8' };
  }
  let scan;
  try {
    scan = scanJson(text, { maxDepth: MAX_DEPTH, drop: dropOneTimePassword });
  } catch (error) {
    if (error instanceof JsonSyntaxError && error.tooDeep) return { ok: false, reason: `body is nested deeper than ${MAX_DEPTH} levels` };
    return { ok: false, reason: 'body is not JSON' };
  }
  const { root } = scan;
  if (root.kind !== 'object') return { ok: false, reason: 'body is not a JSON object' };
  const event = member(root, 'event');
  const name = event?.kind === 'string' ? stringOf(event) : undefined;
  if (name === undefined || name.trim() === '' || name.length > MAX_EVENT_LENGTH) return { ok: false, reason: 'body.event is not an event name' };
  const object = member(root, 'object');
  if (object?.kind !== 'object') return { ok: false, reason: 'body.object is not a JSON object' };
  return {
    ok: true,
    body: { event: name, key: keyOf(member(object, 'id')), objectText: object.compact, canonical: object.canonical, text: scan.dropped > 0 ? root.compact : text },
  };
}

/** An object's member by key; of repeated keys the last, as JSON.parse takes it. */
function member(object: ScannedValue, key: string): ScannedValue | undefined {
  for (let i = object.members.length - 1; i >= 0; i--) if (object.members[i]!.key === key) return object.members[i]!.value;
  return undefined;
}

function keyOf(id: ScannedValue | undefined): EventKey {
  if (id?.kind === 'string') return stringOf(id);
  if (id?.kind === 'number') return numberOf(id.compact);
  return null;
}

/** `object.id` of a body the inbox stored (read when it was received), or undefined if it no longer reads. */
export function storedKeyOf(text: string): EventKey | undefined {
  const parsed = parseEventBody(Buffer.from(text, 'utf8'));
  return parsed.ok ? parsed.body.key : undefined;
}
