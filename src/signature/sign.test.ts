import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { computeSignature, signatureBytes } from './sign.js';

/** What the upstream computes (docs/upstream.md "Signature"), with Node's own HMAC. */
const reference = (secret: string, timestamp: number, body: Uint8Array | string) =>
  createHmac('sha256', secret).update(`${timestamp};`).update(body).digest('hex');

describe('signatureBytes', () => {
  it('is HMAC-SHA256 over "<timestamp>;<body>" for any secret, body and timestamp', () => {
    // Secrets around SHA-256's 64-byte block (padded below it, hashed above it), multi-byte letters included.
    const secret = fc.oneof(fc.string({ maxLength: 100 }), fc.string({ unit: 'grapheme', maxLength: 40 }), fc.integer({ min: 60, max: 70 }).map((n) => 'k'.repeat(n)));
    fc.assert(
      fc.property(secret, fc.oneof(fc.uint8Array({ maxLength: 300 }), fc.string({ maxLength: 200 }), fc.string({ unit: 'grapheme', maxLength: 100 }), fc.string({ unit: 'binary', maxLength: 50 })), fc.integer({ min: 1, max: 99_999_999_999 }), (s, body, ts) => {
        expect(signatureBytes(s, ts, body).toString('hex')).toBe(reference(s, ts, body));
        expect(computeSignature(s, ts, body)).toBe(reference(s, ts, body));
      }),
      { numRuns: 500 },
    );
  });

  it('gives the same bytes when called again with the same secret (its pads are reused)', () => {
    const first = computeSignature('same-secret', 1_700_000_000, 'body');
    expect(computeSignature('same-secret', 1_700_000_000, 'body')).toBe(first);
    expect(computeSignature('other-secret', 1_700_000_000, 'body')).not.toBe(first);
  });
});
