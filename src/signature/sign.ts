import { createHmac } from 'node:crypto';

/**
 * The upstream's webhook signature (api-v2.md "Signature"): HMAC-SHA256 keyed with the secret over
 * `<timestamp>;<raw body>`, hex-encoded, carried in the `Webhook-Signature` header as the JSON object
 * `{"timestamp":<int seconds>,"signature":"<64 hex>"}`. Our own outgoing deliveries (accounting,
 * webhook connectors) are signed exactly the same way.
 */
export const SIGNATURE_HEADER = 'webhook-signature';

export function computeSignature(secret: string, timestamp: number, body: Uint8Array | string): string {
  return signatureBytes(secret, timestamp, body).toString('hex');
}

/** The raw 32 bytes of the signature (what verification compares, without a hex round trip). */
export function signatureBytes(secret: string, timestamp: number, body: Uint8Array | string): Buffer {
  const hmac = createHmac('sha256', secret);
  hmac.update(`${timestamp};`);
  hmac.update(body);
  return hmac.digest();
}

/** The header value for `body` signed at `timestampSeconds`. */
export function signatureHeader(secret: string, body: Uint8Array | string, timestampSeconds: number): string {
  return JSON.stringify({ timestamp: timestampSeconds, signature: computeSignature(secret, timestampSeconds, body) });
}
