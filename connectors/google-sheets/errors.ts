/**
 * What a failed Sheets call means, decided once: 429/408/5xx and network trouble are
 * worth retrying (with the server's Retry-After, or a quota minute for a bare 429); the workbook
 * cell limit, bad credentials and missing access are not, and say how to fix them.
 */
import { BridgeError } from '../../src/errors.js';
import { isNetworkError, isRetryableStatus, parseRetryAfter } from '../../src/http/failure-kind.js';

/** Google's quotas are per minute; a 429 without Retry-After is over when the minute is. */
export const QUOTA_BACKOFF_MS = 60_000;

interface HttpFailure {
  status?: unknown;
  code?: unknown;
  message?: unknown;
  response?: { status?: number; headers?: { get?(name: string): string | null } | Record<string, unknown>; data?: unknown };
}

function headerOf(response: HttpFailure['response'], name: string): string | undefined {
  const headers = response?.headers;
  if (!headers) return undefined;
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(n: string): string | null }).get(name) ?? undefined;
  const value = (headers as Record<string, unknown>)[name];
  return typeof value === 'string' ? value : undefined;
}

function apiMessage(failure: HttpFailure): string {
  const data = failure.response?.data as { error?: { message?: unknown } } | undefined;
  const message = data?.error?.message ?? failure.message;
  return typeof message === 'string' ? message : 'no message';
}

export function isCellLimitMessage(message: string): boolean {
  return /above the limit of [\d,]+ cells/i.test(message);
}

/** `host`: where the Sheets API is reached (rootUrl's, or Google's), named when it cannot be. */
export function classifySheetsError(error: unknown, now: number, context: { spreadsheetId: string; email?: string; host?: string }): BridgeError {
  if (error instanceof BridgeError) return error;
  const failure = (error ?? {}) as HttpFailure;
  const status = failure.response?.status ?? (typeof failure.status === 'number' ? failure.status : undefined);
  if (status === undefined) {
    const code = String(failure.code ?? '');
    if (code === 'AbortError' || (error as Error | undefined)?.name === 'AbortError') {
      return new BridgeError('sheets.aborted', 'Sheets request aborted', { retryable: true, cause: error });
    }
    if (code.startsWith('ERR_OSSL') || /private key|DECODER|PEM/i.test(apiMessage(failure))) {
      return new BridgeError('sheets.credentials', `the service-account key cannot sign requests (${apiMessage(failure)}); download a new JSON key`, { cause: error });
    }
    if (isNetworkError(error) || code === 'TimeoutError' || /network|socket|timed? ?out/i.test(apiMessage(failure))) {
      return new BridgeError('sheets.network', `Sheets${context.host ? ` (${context.host})` : ''} unreachable: ${apiMessage(failure)}`, { retryable: true, cause: error });
    }
    throw error;
  }
  const message = apiMessage(failure);
  const retryAfterMs = parseRetryAfter(headerOf(failure.response, 'retry-after'), now);
  const options = { status, cause: error, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
  if (status === 429) {
    return new BridgeError('sheets.rate_limited', `Sheets quota exceeded: ${message}`, { ...options, retryable: true, retryAfterMs: retryAfterMs ?? QUOTA_BACKOFF_MS });
  }
  if (isRetryableStatus(status)) return new BridgeError('sheets.unavailable', `Sheets answered ${status}: ${message}`, { ...options, retryable: true });
  if (status === 400 && isCellLimitMessage(message)) {
    return new BridgeError('sheets.cell_limit', `spreadsheet ${context.spreadsheetId} is at Google's 10 million cell limit: ${message}. Move old rows or tabs to another spreadsheet`, options);
  }
  if (status === 400 && /Unable to parse range/i.test(message)) {
    // A tab renamed or deleted since we read the spreadsheet's tabs: read them again and retry.
    return new BridgeError('sheets.tab_changed', `a tab changed under us: ${message}`, { ...options, retryable: true });
  }
  if (status === 401) {
    // A service account's key signs its own tokens; a bare accessToken is one of about an hour.
    const fix = context.email
      ? `the key of ${context.email} may have been deleted or disabled: download a new JSON key (credentialsFile)`
      : 'an accessToken lasts about an hour: set a fresh one, or use credentialsFile (a service-account key) for a daemon';
    return new BridgeError('sheets.unauthenticated', `Google rejected the credentials (${message}); ${fix}`, options);
  }
  if (status === 403) {
    const who = context.email ? `share the spreadsheet with ${context.email} as Editor` : 'the token needs the spreadsheets scope and edit access';
    return new BridgeError('sheets.forbidden', `no access to spreadsheet ${context.spreadsheetId} (${message}): ${who}`, options);
  }
  if (status === 404) return new BridgeError('sheets.not_found', `spreadsheet ${context.spreadsheetId} not found: check spreadsheetId (the id in /d/<id>/edit)`, options);
  return new BridgeError('sheets.rejected', `Sheets answered ${status}: ${message}`, options);
}
