import { request, type Dispatcher } from 'undici';
import type { DeliveryOutcome } from './types.js';
import { signatureHeader } from '../signature/index.js';
import { classifyFailure, classifyResponse } from './classify.js';

export interface SignedPost {
  url: string;
  secret: string;
  /** Extra headers; they cannot replace the ones that make the delivery what it is (below). */
  headers: Record<string, string>;
  timeoutMs: number;
  dispatcher: Dispatcher;
  signal: AbortSignal;
  /** Epoch ms; the signature's timestamp is its whole seconds, as the upstream signs. */
  now: number;
  /** Prefix of error codes (`webhook.unavailable`, `accounting.rejected`, …). */
  code?: string;
}

const EXCERPT_BYTES = 512;

/**
 * POSTs one record as JSON, signed exactly as the upstream signs its own deliveries (HMAC-SHA256 of
 * `<timestamp>;<body>` with the secret, `Webhook-Signature: {"timestamp":…,"signature":…}`), with
 * `Idempotency-Key: <record id>` so a redelivery after a crash is recognised by the receiver.
 * Never throws: the answer (or its absence) is classified into a delivery outcome.
 */
export async function postSigned(idempotencyKey: string, body: string, post: SignedPost): Promise<DeliveryOutcome> {
  const timestamp = Math.floor(post.now / 1000);
  const headers: Record<string, string> = {
    'user-agent': 'schoolbridge',
    ...lowerCaseKeys(post.headers),
    'content-type': 'application/json',
    'idempotency-key': idempotencyKey,
    'webhook-signature': signatureHeader(post.secret, body, timestamp),
  };
  try {
    const response = await request(post.url, {
      method: 'POST',
      headers,
      body,
      dispatcher: post.dispatcher,
      signal: post.signal,
      headersTimeout: post.timeoutMs,
      bodyTimeout: post.timeoutMs,
    });
    const excerpt = await readExcerpt(response.body);
    return classifyResponse(response.statusCode, response.headers, excerpt, post.now, post.code);
  } catch (error) {
    return classifyFailure(error, post.code);
  }
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

/** The start of the answer for the error message; the rest is drained so the socket can be reused. */
async function readExcerpt(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      if (size < EXCERPT_BYTES) chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
    }
  } catch {
    // A broken body after the status line: the status is what counts.
  }
  return Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8');
}
