import { isDecodingError } from './content-encoding.js';
import { BridgeError } from '../errors.js';
import { isNetworkError, isRetryableStatus, parseRetryAfter } from '../http/failure-kind.js';
import { waitText } from '../wait-text.js';

/** The stable codes of upstream failures; documented in README.md. */
export const UPSTREAM_ERROR_CODES = [
  'upstream.http',
  'upstream.auth',
  'upstream.not_found',
  'upstream.network',
  'upstream.timeout',
  'upstream.aborted',
  'upstream.invalid_json',
  'upstream.invalid_response',
  'upstream.too_large',
  'upstream.config',
] as const;
export type UpstreamErrorCode = (typeof UPSTREAM_ERROR_CODES)[number];

/** What an error body says, from either shape the service uses (docs/upstream.md). */
export interface UpstreamErrorBody {
  code?: string;
  message?: string;
}

/**
 * Reads `{"error":"invalid_client","error_description":"..."}` (OAuth, flat) and
 * `{"error":{"code":"notFound","message":"..."}}` (nested). Anything else gives `{}`: an error body is
 * informational, never a reason to fail differently.
 */
export function parseErrorBody(text: string): UpstreamErrorBody {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return {};
  }
  if (typeof body !== 'object' || body === null) return {};
  const { error, error_description: description, message } = body as Record<string, unknown>;
  if (typeof error === 'string') {
    return { code: error, ...(typeof description === 'string' ? { message: description } : {}) };
  }
  if (typeof error === 'object' && error !== null) {
    const nested = error as Record<string, unknown>;
    return {
      ...(typeof nested.code === 'string' ? { code: nested.code } : {}),
      ...(typeof nested.message === 'string' ? { message: nested.message } : {}),
    };
  }
  return typeof message === 'string' ? { message } : {};
}

/** How much of what the upstream said in an error answer its message quotes. */
const SAID_LIMIT = 300;

/** Classifies a non-2xx answer (decided in one place). */
export function errorFromStatus(status: number, bodyText: string, retryAfter: string | string[] | undefined, now: number, location?: string | string[]): BridgeError {
  const body = parseErrorBody(bodyText);
  const said = body.message ?? body.code;
  // Its own words quoted as JSON, cut short: public pages leave them out (public-text.ts).
  const message = `upstream answered HTTP ${status}${said === undefined ? '' : `: ${JSON.stringify(said.slice(0, SAID_LIMIT))}`}${movedTo(status, location)}`;
  const context = { upstreamCode: body.code, upstreamMessage: body.message };
  if (status === 401 || status === 403) {
    return new BridgeError('upstream.auth', message, { status, context });
  }
  if (status === 404) return new BridgeError('upstream.not_found', message, { status, context });
  const retryable = isRetryableStatus(status);
  const retryAfterMs = retryable ? parseRetryAfter(retryAfter, now) : undefined;
  // The wait it asks for: a retry gives up on one longer than a back-off step, and the operator should know why.
  const asked = retryAfterMs ? ` (it asks to wait ${waitText(retryAfterMs)})` : '';
  return new BridgeError('upstream.http', `${message}${asked}`, {
    status,
    retryable,
    context,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

/**
 * Where a redirect points, by its origin: redirects are not followed (the token would go along), and
 * the usual one (http to https, a new host) is fixed in upstream.baseUrl. The path is left out: it is
 * ours, and its query could carry what is not for a log.
 */
function movedTo(status: number, location: string | string[] | undefined): string {
  const raw = Array.isArray(location) ? location[0] : location;
  if (status < 300 || status > 399 || !raw) return '';
  try {
    const { origin } = new URL(raw);
    return origin === 'null' ? '' : ` (it redirects to ${origin}: is that the service's address for upstream.baseUrl?)`;
  } catch {
    return '';
  }
}

/**
 * Wraps a thrown transport error; an abort by the caller is not a network failure. `answered`: the
 * answer's headers had arrived, so the upstream was reached and its answer broke off.
 */
export function errorFromThrown(error: unknown, reason: 'aborted' | 'timeout' | undefined, timeoutMs: number, answered = false): BridgeError {
  if (error instanceof BridgeError) return error;
  if (reason === 'aborted') return new BridgeError('upstream.aborted', 'upstream call aborted', { cause: error });
  const code = (error as { code?: unknown } | null)?.code;
  if (reason === 'timeout' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    // A pause in the middle of the body is not "no answer": say which it was, and the key that sets it.
    const what = code === 'UND_ERR_BODY_TIMEOUT' ? `upstream's answer stopped for more than ${timeoutMs} ms` : `upstream did not answer within ${timeoutMs} ms`;
    return new BridgeError('upstream.timeout', `${what} (upstream.timeoutMs)`, { retryable: true, cause: error });
  }
  if (isDecodingError(error)) {
    return new BridgeError('upstream.invalid_response', `upstream's compressed answer cannot be decoded: ${(error as Error).message}`, { cause: error });
  }
  // Any coded error from undici or the socket layer (premature close, length mismatch, reset) means
  // "the exchange did not complete"; uncoded errors are bugs and are rethrown.
  if (isNetworkError(error) || typeof code === 'string') {
    const detail = error instanceof Error ? error.message : String(error);
    const what = answered ? "upstream's answer broke off before its end" : 'upstream unreachable';
    return new BridgeError('upstream.network', `${what}: ${detail}`, { retryable: true, cause: error });
  }
  throw error; // a bug, not an expected failure
}

/** An answer that went on past `limit` bytes (decoded), and was not read further; `key` sets the bound. */
export function tooLarge(limit: number, key?: string): BridgeError {
  const set = key ? ` (${key}: raise it if the answer is really that large)` : '';
  return new BridgeError('upstream.too_large', `upstream's answer went past ${limit} bytes${set}, and was not read further`, { retryable: false });
}

export function invalidJson(detail: string, cause?: unknown): BridgeError {
  return new BridgeError('upstream.invalid_json', `upstream answer is not valid JSON: ${detail}`, {
    retryable: false,
    ...(cause === undefined ? {} : { cause }),
  });
}
