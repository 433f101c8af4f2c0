/**
 * Which HTTP outcomes are worth retrying, decided in one place for the upstream client
 * and the connectors alike: 408, 429, 5xx and network errors are; other 4xx are not.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status <= 599);
}

/**
 * Parses a Retry-After header (delta-seconds or an HTTP date) into milliseconds from `now`.
 * Returns undefined for a missing or unreadable value; never negative.
 */
export function parseRetryAfter(value: string | string[] | undefined | null, now: number): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined || raw === null) return undefined;
  const text = raw.trim();
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // A signed number is no delay (Date.parse would read "-5" as a year).
  if (/^[-+]/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** Network-level error codes (undici and node) that mean "the request may not have arrived". */
const NETWORK_CODES = new Set([
  'ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH',
  'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED', 'UND_ERR_ABORTED',
]);

export function isNetworkError(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * What a TLS failure means, for the operator who set the URL: OpenSSL's own words name a record
 * layer and a source file, and end with a newline.
 */
const NO_TLS = 'the server does not answer TLS: an https:// URL to a plain-HTTP port? Use http://, or the port that serves TLS';
const TLS_MEANINGS: Record<string, string> = {
  ERR_SSL_WRONG_VERSION_NUMBER: NO_TLS,
  ERR_SSL_PACKET_LENGTH_TOO_LONG: NO_TLS,
  CERT_HAS_EXPIRED: 'the server\'s certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the server\'s certificate is self-signed, so it cannot be verified',
  SELF_SIGNED_CERT_IN_CHAIN: 'the server\'s certificate chain ends in a self-signed certificate that is not trusted',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the server\'s certificate cannot be verified: it sends no chain to a trusted authority',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'the server\'s certificate cannot be verified: its issuer is not trusted here',
  ERR_TLS_CERT_ALTNAME_INVALID: 'the server\'s certificate is for another host name',
};

/** An error of an HTTP exchange as one line: a TLS failure said in words, anything else as describeError has it. */
export function describeExchangeError(error: unknown, describe: (error: unknown) => string): string {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code in TLS_MEANINGS) return `${code}: ${TLS_MEANINGS[code]}`;
    current = (current as { cause?: unknown }).cause;
  }
  return describe(error).trim().replace(/\s*\n\s*/g, ' ');
}
