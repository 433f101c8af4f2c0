import type { DeliveryOutcome } from './types.js';
import { BridgeError, describeError } from '../errors.js';
import { isNetworkError, isRetryableStatus, parseRetryAfter } from '../http/failure-kind.js';

/**
 * The outcome of one signed POST (pure). 2xx is done; 408, 429 and 5xx are worth another
 * try, after Retry-After when the receiver said; any other status is dead at once (retrying
 * would not help). `excerpt` is the start of the response body, for `deliveries list`.
 */
export function classifyResponse(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  excerpt: string,
  now: number,
  code = 'webhook',
): DeliveryOutcome {
  if (status >= 200 && status < 300) return { status: 'done', httpStatus: status };
  const detail = excerpt.trim() ? `: ${excerpt.trim().replace(/\s+/g, ' ').slice(0, 200)}` : '';
  if (isRetryableStatus(status)) {
    const retryAfterMs = parseRetryAfter(headers['retry-after'], now);
    const error = new BridgeError(`${code}.unavailable`, `the receiver answered ${status}${detail}`, { retryable: true, status, retryAfterMs });
    return retryAfterMs === undefined ? { status: 'retry', error } : { status: 'retry', error, retryAfterMs };
  }
  return { status: 'dead', error: new BridgeError(`${code}.rejected`, `the receiver answered ${status}${redirectHint(status, headers.location)}${detail}`, { status }) };
}

/**
 * What a redirect asked for: deliveries do not follow one (the signature and the headers would go
 * along to wherever it points). Only the target's origin is named: its path may be a credential.
 */
function redirectHint(status: number, location: string | string[] | undefined): string {
  if (status < 300 || status >= 400) return '';
  const target = Array.isArray(location) ? location[0] : location;
  let where = '';
  if (target) {
    try {
      where = /^[a-z][a-z0-9+.-]*:/i.test(target) ? ` to ${new URL(target).origin}` : ' to another path of the same host';
    } catch {
      where = '';
    }
  }
  return ` (a redirect${where}: deliveries do not follow redirects; set the connector's url to where it points)`;
}

/**
 * A request that got no answer. Network errors and timeouts are retried; so is anything unexpected,
 * because the record itself was fine and the target may simply be unreachable. `describe` words the
 * error (a caller removes what must not be shown, such as its URL).
 */
export function classifyFailure(error: unknown, code = 'webhook', describe: (error: unknown) => string = describeError): DeliveryOutcome {
  const kind = isNetworkError(error) ? 'network' : 'failed';
  return { status: 'retry', error: new BridgeError(`${code}.${kind}`, describe(error), { retryable: true, cause: error }) };
}
