import { request, type Dispatcher } from 'undici';
import type { DeliveryOutcome } from './types.js';
import { BridgeError, describeError } from '../errors.js';
import { startDeadline } from '../http/deadline.js';
import { describeExchangeError } from '../http/failure-kind.js';
import { withoutUrl } from '../http/probe.js';
import { withUrlCredentials } from '../http/url-credentials.js';
import { signatureHeader } from '../signature/index.js';
import { classifyFailure, classifyResponse } from './classify.js';

export interface SignedPost {
  url: string;
  secret: string;
  /** Extra headers; they cannot replace the ones that make the delivery what it is (below). */
  headers: Record<string, string>;
  /** The whole attempt's deadline: connect, send, the answer's headers and the part of its body that is read. */
  timeoutMs: number;
  dispatcher: Dispatcher;
  signal: AbortSignal;
  /** Epoch ms; the signature's timestamp is its whole seconds, as the upstream signs. */
  now: number;
  /** Prefix of error codes (`webhook.unavailable`, `accounting.rejected`, …). */
  code?: string;
}

/** What is kept of an answer's body (for `deliveries list`); the rest is never read. */
const EXCERPT_BYTES = 512;

/**
 * POSTs one record as JSON, signed exactly as the upstream signs its own deliveries (HMAC-SHA256 of
 * `<timestamp>;<body>` with the secret, `Webhook-Signature: {"timestamp":…,"signature":…}`), with
 * `Idempotency-Key: <record id>` so a redelivery after a crash is recognised by the receiver.
 * Never throws: the answer (or its absence) is classified into a delivery outcome.
 *
 * The attempt has one deadline, `timeoutMs`: no answer's status by then is a retry. Of the body,
 * the first 512 bytes are read at most, until the deadline, and the rest is dropped (the connection
 * with it): a receiver that trickles its answer cannot hold the delivery, and the status is what counts.
 */
export async function postSigned(idempotencyKey: string, body: string, post: SignedPost): Promise<DeliveryOutcome> {
  const timestamp = Math.floor(post.now / 1000);
  const target = withUrlCredentials(post.url, lowerCaseKeys(post.headers));
  // The config refuses extra headers of these names (config/fields.ts, extraHeaders); ours win all the same.
  const headers: Record<string, string> = {
    ...target.headers,
    'user-agent': 'schoolbridge',
    'content-type': 'application/json',
    'idempotency-key': idempotencyKey,
    'webhook-signature': signatureHeader(post.secret, body, timestamp),
  };
  const deadline = startDeadline(post.timeoutMs, post.signal);
  try {
    const response = await request(target.url, {
      method: 'POST',
      headers,
      body,
      dispatcher: post.dispatcher,
      signal: deadline.signal,
      headersTimeout: post.timeoutMs,
      bodyTimeout: post.timeoutMs,
    });
    const excerpt = await readExcerpt(response.body);
    return classifyResponse(response.statusCode, response.headers, excerpt, post.now, post.code);
  } catch (error) {
    // The URL may be a credential (a hook path): an error names its origin only.
    if (!deadline.expired) return classifyFailure(error, post.code, (e) => withoutUrl(describeExchangeError(e, describeError), post.url));
    const message = `no answer within ${post.timeoutMs} ms (timeoutMs)`;
    return { status: 'retry', error: new BridgeError(`${post.code ?? 'webhook'}.network`, message, { retryable: true, cause: error }) };
  } finally {
    deadline.clear();
  }
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

/**
 * The start of the answer, for the error message: read until the body ends, EXCERPT_BYTES have come
 * or the deadline aborts the read. Then the body is dropped; a short answer read to its end leaves
 * the connection to be reused.
 */
async function readExcerpt(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk as Buffer);
      size += (chunk as Buffer).length;
      if (size >= EXCERPT_BYTES) break;
    }
  } catch {
    // A broken body after the status line, or one cut off at the deadline: the status is what counts.
  } finally {
    // A body destroyed before its end emits an error (undici's RequestAbortedError) that nobody awaits.
    body.on('error', () => {});
    body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8');
}
