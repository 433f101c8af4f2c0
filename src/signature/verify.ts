import { timingSafeEqual } from 'node:crypto';
import { signatureBytes } from './sign.js';

export type VerifyFailure = 'missing' | 'malformed' | 'mismatch' | 'stale' | 'future';

export type SignatureHeader = { ok: true; timestamp: number; signature: string } | { ok: false; reason: 'missing' | 'malformed' };

export type VerifyResult =
  | { ok: true; timestamp: number; secretIndex: number }
  /** `signed` is true when the signature itself was valid (only the timestamp failed). */
  | { ok: false; reason: VerifyFailure; signed: boolean; timestamp?: number; secretIndex?: number };

const HEX64 = /^[0-9a-fA-F]{64}$/;
/** Above this a timestamp cannot be seconds (year 5138); we read it as milliseconds. */
export const MILLISECONDS_THRESHOLD = 1e11;

/**
 * Verifies a `Webhook-Signature` header against the raw body. Pure: the time is passed in (ms), and it
 * never throws, whatever the input. Accepts any of `secrets` (the current one first, then the ones
 * still valid during a rotation). The signature is checked before the timestamp window, so a caller
 * can tell a correctly signed but stale delivery (quarantine) from a forgery.
 *
 * Decisions: `timestamp` must be a positive safe integer, in seconds (a value beyond 1e11 is taken to
 * be milliseconds); `signature` is exactly 64 hex characters, either case (hex is case-free: the same
 * 32 bytes either way); the window applies both to the past and to the future, inclusive at its edges.
 * The signed text is `${timestamp};` as JavaScript prints the parsed integer, so `1.7e9` in the header
 * is read as 1700000000 and must have been signed as such.
 */
export function verifySignature(
  secrets: readonly string[],
  headerValue: unknown,
  rawBody: Uint8Array,
  nowMs: number,
  toleranceSeconds: number,
): VerifyResult {
  const header = parseSignatureHeader(headerValue);
  if (!header.ok) return { ok: false, reason: header.reason, signed: false };
  const { timestamp, signature } = header;
  if (!(rawBody instanceof Uint8Array)) return { ok: false, reason: 'malformed', signed: false };
  const given = Buffer.from(signature, 'hex');
  let secretIndex = -1;
  for (let i = 0; i < (Array.isArray(secrets) ? secrets.length : 0); i++) {
    const secret: unknown = secrets[i];
    if (typeof secret !== 'string' || secret === '') continue;
    const expected = signatureBytes(secret, timestamp, rawBody);
    // Both are 32 bytes here (checked by HEX64), so timingSafeEqual cannot throw on length.
    if (expected.length === given.length && timingSafeEqual(expected, given)) {
      secretIndex = i;
      break;
    }
  }
  if (secretIndex < 0) return { ok: false, reason: 'mismatch', signed: false };

  const inSeconds = timestamp <= MILLISECONDS_THRESHOLD;
  const timestampMs = inSeconds ? timestamp * 1000 : timestamp;
  // A timestamp in seconds names a whole second: it is compared with the clock's second, so one
  // exactly `toleranceSeconds` old is still inside the window all through that second.
  const now = inSeconds ? Math.floor(nowMs / 1000) * 1000 : nowMs;
  // A NaN or negative tolerance or clock must fail closed: written as negations, every comparison
  // with NaN lands on the rejecting side.
  const toleranceMs = Number.isFinite(toleranceSeconds) && toleranceSeconds > 0 ? toleranceSeconds * 1000 : 0;
  if (!(timestampMs >= now - toleranceMs)) return { ok: false, reason: 'stale', signed: true, timestamp, secretIndex };
  if (!(timestampMs <= now + toleranceMs)) return { ok: false, reason: 'future', signed: true, timestamp, secretIndex };
  return { ok: true, timestamp, secretIndex };
}

/**
 * The `Webhook-Signature` header read on its own (pure, never throws): a JSON object (at most 1024
 * characters) with `timestamp`, a positive safe integer, and `signature`, 64 hex characters. What it
 * refuses no body can make valid, so the intake answers it before reading the body.
 */
export function parseSignatureHeader(headerValue: unknown): SignatureHeader {
  if (headerValue === undefined || headerValue === null || headerValue === '') return { ok: false, reason: 'missing' };
  if (typeof headerValue !== 'string' || headerValue.length > 1024) return { ok: false, reason: 'malformed' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(headerValue);
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { ok: false, reason: 'malformed' };
  const { timestamp, signature } = parsed as { timestamp?: unknown; signature?: unknown };
  if (typeof timestamp !== 'number' || !Number.isSafeInteger(timestamp) || timestamp <= 0) return { ok: false, reason: 'malformed' };
  if (typeof signature !== 'string' || !HEX64.test(signature)) return { ok: false, reason: 'malformed' };
  return { ok: true, timestamp, signature };
}
