import { isRedactedKey } from '../log.js';

/**
 * A copy of the config with every secret replaced by "***" (set) — what `config check` prints: keys
 * that name secrets, header values, URL passwords, and the path of a connector's http(s) `url`.
 */
export function maskSecrets(value: unknown, key = ''): unknown {
  if (key !== '' && (isRedactedKey(key) || key === 'headers') && value !== undefined && value !== null && value !== '') {
    if (Array.isArray(value)) return value.map(() => '***');
    if (typeof value === 'object') return Object.fromEntries(Object.keys(value).map((k) => [k, '***']));
    return '***';
  }
  if (Array.isArray(value)) return value.map((item) => maskSecrets(item));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskSecrets(v, k)]));
  }
  if (key === 'url' && typeof value === 'string') return maskUrlPath(maskUrlPassword(value));
  return typeof value === 'string' ? maskUrlPassword(value) : value;
}

/**
 * A connector's http(s) `url` with its path and query as "***": a Zapier or Make hook path is the
 * credential itself. The origin stays, to tell which endpoint it is. Other URLs as they are.
 */
function maskUrlPath(text: string): string {
  if (!/^https?:\/\//i.test(text)) return text;
  try {
    const url = new URL(text);
    if ((url.pathname === '/' || url.pathname === '') && url.search === '') return text;
    const auth = url.username ? `${url.username}${url.password ? `:${url.password}` : ''}@` : '';
    return `${url.protocol}//${auth}${url.host}/***`;
  } catch {
    return text;
  }
}

/** A URL's password (`postgres://user:password@host/db`, store.url) as "***"; other text as it is. */
function maskUrlPassword(text: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/@]*:[^/@]*@/i.test(text)) return text;
  try {
    const url = new URL(text);
    if (!url.password) return text;
    url.password = '***';
    return url.toString();
  } catch {
    return text;
  }
}
