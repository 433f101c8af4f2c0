import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { computeSignature, signatureHeader } from './sign.js';
import { parseSignatureHeader, verifySignature } from './verify.js';

const SECRET = 'topsecret';
const NOW_MS = 1_795_000_000_000;
const TS = NOW_MS / 1000;
const BODY = Buffer.from('{"event":"invoice.created","object":{"id":1}}');
const SIG = computeSignature(SECRET, TS, BODY);
const header = (value: unknown) => JSON.stringify(value);

describe('verifySignature', () => {
  const cases: { name: string; header: unknown; body?: Uint8Array; now?: number; secrets?: readonly string[]; tolerance?: number; expect: object }[] = [
    { name: 'valid', header: header({ timestamp: TS, signature: SIG }), expect: { ok: true, timestamp: TS, secretIndex: 0 } },
    { name: 'upper-case hex', header: header({ timestamp: TS, signature: SIG.toUpperCase() }), expect: { ok: true } },
    { name: 'previous secret', header: header({ timestamp: TS, signature: SIG }), secrets: ['new', SECRET], expect: { ok: true, secretIndex: 1 } },
    { name: 'keys in other order, extra key', header: header({ signature: SIG, v: 1, timestamp: TS }), expect: { ok: true } },
    { name: 'edge of the past window', header: header({ timestamp: TS, signature: SIG }), now: NOW_MS + 300_000, expect: { ok: true } },
    { name: 'the edge\'s whole second (a timestamp in seconds)', header: header({ timestamp: TS, signature: SIG }), now: NOW_MS + 300_999, expect: { ok: true } },
    { name: 'just past it', header: header({ timestamp: TS, signature: SIG }), now: NOW_MS + 301_000, expect: { ok: false, reason: 'stale', signed: true } },
    { name: 'future beyond the window', header: header({ timestamp: TS, signature: SIG }), now: NOW_MS - 301_000, expect: { ok: false, reason: 'future', signed: true } },
    { name: 'NaN clock fails closed', header: header({ timestamp: TS, signature: SIG }), now: Number.NaN, expect: { ok: false, signed: true } },
    { name: 'NaN tolerance is zero', header: header({ timestamp: TS, signature: SIG }), now: NOW_MS + 1000, tolerance: Number.NaN, expect: { ok: false, reason: 'stale' } },
    { name: 'undefined', header: undefined, expect: { ok: false, reason: 'missing', signed: false } },
    { name: 'empty', header: '', expect: { ok: false, reason: 'missing' } },
    { name: 'array', header: ['a'], expect: { ok: false, reason: 'malformed' } },
    { name: 'not JSON', header: `t=${TS},v1=${SIG}`, expect: { ok: false, reason: 'malformed' } },
    { name: 'JSON null', header: 'null', expect: { ok: false, reason: 'malformed' } },
    { name: 'JSON array', header: header([TS, SIG]), expect: { ok: false, reason: 'malformed' } },
    { name: 'string timestamp', header: header({ timestamp: String(TS), signature: SIG }), expect: { ok: false, reason: 'malformed' } },
    { name: 'fractional timestamp', header: header({ timestamp: TS + 0.5, signature: SIG }), expect: { ok: false, reason: 'malformed' } },
    { name: 'zero timestamp', header: header({ timestamp: 0, signature: SIG }), expect: { ok: false, reason: 'malformed' } },
    { name: 'negative timestamp', header: header({ timestamp: -TS, signature: SIG }), expect: { ok: false, reason: 'malformed' } },
    { name: 'huge timestamp', header: '{"timestamp":1e400,"signature":"' + SIG + '"}', expect: { ok: false, reason: 'malformed' } },
    { name: 'short signature', header: header({ timestamp: TS, signature: SIG.slice(1) }), expect: { ok: false, reason: 'malformed' } },
    { name: 'non-hex signature', header: header({ timestamp: TS, signature: `${SIG.slice(1)}g` }), expect: { ok: false, reason: 'malformed' } },
    { name: 'base64 signature', header: header({ timestamp: TS, signature: Buffer.from(SIG, 'hex').toString('base64') }), expect: { ok: false, reason: 'malformed' } },
    { name: 'over-long header', header: header({ timestamp: TS, signature: SIG, pad: 'x'.repeat(2000) }), expect: { ok: false, reason: 'malformed' } },
    { name: 'wrong secret', header: header({ timestamp: TS, signature: SIG }), secrets: ['other'], expect: { ok: false, reason: 'mismatch', signed: false } },
    { name: 'no secrets', header: header({ timestamp: TS, signature: SIG }), secrets: [], expect: { ok: false, reason: 'mismatch' } },
    { name: 'empty secret skipped', header: header({ timestamp: TS, signature: computeSignature('x', TS, BODY) }), secrets: [''], expect: { ok: false, reason: 'mismatch' } },
    { name: 'other body', header: header({ timestamp: TS, signature: SIG }), body: Buffer.from('{}'), expect: { ok: false, reason: 'mismatch' } },
    { name: 'stale and forged', header: header({ timestamp: TS - 10_000, signature: SIG }), expect: { ok: false, reason: 'mismatch', signed: false } },
  ];

  it.each(cases)('$name', (c) => {
    const result = verifySignature(c.secrets ?? [SECRET], c.header, c.body ?? BODY, c.now ?? NOW_MS, c.tolerance ?? 300);
    expect(result).toMatchObject(c.expect);
  });

  it('reads a timestamp beyond 1e11 as milliseconds', () => {
    const ms = NOW_MS;
    const value = JSON.stringify({ timestamp: ms, signature: computeSignature(SECRET, ms, BODY) });
    expect(verifySignature([SECRET], value, BODY, NOW_MS, 300)).toMatchObject({ ok: true, timestamp: ms });
  });

  it('never throws, whatever the header, body, secrets or clock', () => {
    fc.assert(
      fc.property(fc.anything(), fc.anything(), fc.anything(), fc.anything(), fc.anything(), (h, b, s, n, t) => {
        const result = verifySignature(s as string[], h, b as Uint8Array, n as number, t as number);
        expect(typeof result.ok).toBe('boolean');
      }),
    );
  });
});

describe('sign → verify', () => {
  const secret = fc.string({ minLength: 1, maxLength: 40 });
  const body = fc.uint8Array({ maxLength: 300 });
  const timestamp = fc.integer({ min: 1, max: 99_999_999_999 });

  it('round-trips for any secret, body and timestamp', () => {
    fc.assert(
      fc.property(secret, body, timestamp, (s, b, ts) => {
        const result = verifySignature([s], signatureHeader(s, b, ts), b, ts * 1000, 1);
        expect(result.ok).toBe(true);
      }),
    );
  });

  it('fails when any byte of the body changes', () => {
    fc.assert(
      fc.property(secret, body.filter((b) => b.length > 0), timestamp, fc.nat(), fc.integer({ min: 1, max: 255 }), (s, b, ts, at, delta) => {
        const header = signatureHeader(s, b, ts);
        const tampered = Uint8Array.from(b);
        const i = at % b.length;
        tampered[i] = (tampered[i]! + delta) % 256;
        expect(verifySignature([s], header, tampered, ts * 1000, 1)).toMatchObject({ ok: false, reason: 'mismatch' });
      }),
    );
  });

  it('fails when any character of the timestamp or signature changes', () => {
    fc.assert(
      fc.property(secret, body, timestamp, fc.boolean(), fc.nat(), fc.integer({ min: 1, max: 15 }), (s, b, ts, inTimestamp, at, delta) => {
        const { signature } = JSON.parse(signatureHeader(s, b, ts)) as { signature: string };
        let header: string;
        if (inTimestamp) {
          const digits = String(ts).split('');
          const i = at % digits.length;
          digits[i] = String((Number(digits[i]) + (delta % 9) + 1) % 10);
          header = `{"timestamp":${digits.join('')},"signature":"${signature}"}`;
        } else {
          const chars = signature.split('');
          const i = at % chars.length;
          chars[i] = ((parseInt(chars[i]!, 16) + delta) % 16).toString(16);
          header = JSON.stringify({ timestamp: ts, signature: chars.join('') });
        }
        // Any clock: a changed timestamp is a different signed text, so it must never verify.
        const result = verifySignature([s], header, b, ts * 1000, 1e12);
        expect(result.ok).toBe(false);
      }),
    );
  });
});

describe('parseSignatureHeader', () => {
  it.each([
    [undefined, { ok: false, reason: 'missing' }],
    ['', { ok: false, reason: 'missing' }],
    ['t=1,v1=abc', { ok: false, reason: 'malformed' }],
    [header({ timestamp: '1795000000', signature: SIG }), { ok: false, reason: 'malformed' }],
    [header({ timestamp: TS, signature: SIG.slice(1) }), { ok: false, reason: 'malformed' }],
    [header({ timestamp: TS, signature: SIG }), { ok: true, timestamp: TS, signature: SIG }],
    // Milliseconds stay accepted: the header is well formed, and verifySignature reads them as such.
    [header({ timestamp: NOW_MS, signature: SIG }), { ok: true, timestamp: NOW_MS, signature: SIG }],
  ])('%s → %j', (value, expected) => {
    expect(parseSignatureHeader(value)).toEqual(expected);
  });

  it('refuses exactly what verifySignature refuses as missing or malformed, whatever the body', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json(), fc.constant(undefined)), (value) => {
        const parsed = parseSignatureHeader(value);
        const verified = verifySignature([SECRET], value, BODY, NOW_MS, 300);
        if (!parsed.ok) expect(verified).toMatchObject({ ok: false, reason: parsed.reason });
        else expect(['missing', 'malformed']).not.toContain(verified.ok ? '' : verified.reason);
      }),
    );
  });
});
