/**
 * Reads a verified delivery body (api-v2.md "Event body"): a JSON object with `event`, a non-empty
 * event name, and `object`, a JSON object. Anything else is answered 400: the signature was valid,
 * so retrying the same bytes will not help, but the sender must learn we could not take it.
 */
export interface EventBody {
  event: string;
  object: Record<string, unknown>;
}

/** `text`: the body decoded, as received (what the inbox keeps). */
export type ParsedBody = { ok: true; body: EventBody; text: string } | { ok: false; reason: string };

/** Longest event name we accept; real ones look like `invoice.created`. */
const MAX_EVENT_LENGTH = 200;
const MAX_DEPTH = 64;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

export function parseEventBody(raw: Uint8Array): ParsedBody {
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    return { ok: false, reason: 'body is not UTF-8' };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'body is not JSON' };
  }
  if (!isPlainObject(value)) return { ok: false, reason: 'body is not a JSON object' };
  // Hashing, storing and delivering walk the value recursively: a hostile nesting depth would blow
  // the stack there, so it is refused here, where it is still a 400.
  if (nestingExceeds(value, MAX_DEPTH)) return { ok: false, reason: `body is nested deeper than ${MAX_DEPTH} levels` };
  const { event, object } = value;
  if (typeof event !== 'string' || event.trim() === '' || event.length > MAX_EVENT_LENGTH) {
    return { ok: false, reason: 'body.event is not an event name' };
  }
  if (!isPlainObject(object)) return { ok: false, reason: 'body.object is not a JSON object' };
  return { ok: true, body: { event, object }, text };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Recursive, but it stops one level past `limit`, so the check itself cannot overflow the stack.
 * (Only objects and arrays are descended into; `for…in` over a parsed JSON value sees own keys only.)
 */
function nestingExceeds(value: object, limit: number, depth = 1): boolean {
  if (depth > limit) return true;
  const container = value as Record<string, unknown>;
  for (const key in container) {
    const child = container[key];
    if (typeof child === 'object' && child !== null && nestingExceeds(child, limit, depth + 1)) return true;
  }
  return false;
}
