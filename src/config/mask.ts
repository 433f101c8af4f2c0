import { isRedactedKey } from '../log.js';

/**
 * A copy of the config with every secret replaced by "***" (set) — what `config check` prints: keys
 * that name secrets, header values, URL passwords, and the path of a connector's http(s) `url`.
 */
export function maskSecrets(value: unknown, key = ''): unknown {
  if (isSecretKey(key) && value !== undefined && value !== null && value !== '') {
    if (Array.isArray(value)) return value.map(() => '***');
    if (typeof value === 'object') return Object.fromEntries(Object.keys(value).map((k) => [k, '***']));
    return '***';
  }
  if (Array.isArray(value)) return value.map((item) => maskSecrets(item));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskSecrets(v, k)]));
  }
  if (key === 'url' && typeof value === 'string') return maskUrlPath(maskUrlCredentials(value));
  return typeof value === 'string' ? maskUrlCredentials(value) : value;
}

/**
 * One written value of `key` as `maskSecrets` would print it, for text that quotes the config as
 * written (a YAML error's lines).
 */
export function maskWritten(key: string, text: string): string {
  if (isSecretKey(key) && text.trim() !== '') return '***';
  return key === 'url' ? maskUrlPath(maskUrlCredentials(text)) : maskUrlCredentials(text);
}

/** Keys whose values are secrets at any depth (a header's value: an API key of the receiver). */
export const isSecretKey = (key: string) => key !== '' && (isRedactedKey(key) || key === 'headers');

/** Shorter values are not looked for in texts: "abc" would mask every word holding it, and no real credential is that short. */
export const SHORTEST_SECRET = 6;

/**
 * The secret values of a config block, each as it is written: what `maskSecrets` masks (values of
 * secret keys, header values, the path and query of an http(s) `url`), to be masked where they show
 * up in a text (a receiver's answer that echoes what it was sent).
 */
export function secretValues(value: unknown, key = '', out = new Set<string>()): Set<string> {
  if (typeof value === 'string') {
    const secrets = [isSecretKey(key) ? value : undefined, ...(key === 'url' ? urlPartsOf(value) : []), urlPasswordOf(value), ...querySecretsOf(value)];
    for (const secret of secrets) if (secret !== undefined && secret.length >= SHORTEST_SECRET) out.add(secret);
  } else if (Array.isArray(value)) {
    for (const item of value) secretValues(item, key, out);
  } else if (value !== null && typeof value === 'object') {
    // Inside a secret key's object (headers) every value is secret.
    for (const [k, v] of Object.entries(value)) secretValues(v, isSecretKey(key) ? key : k, out);
  }
  return out;
}

/**
 * `text` with each of `secrets` (secretValues) as "***": an error that quotes what it was sent (a
 * receiver's answer, a client's error with its URL). Longest first, so a secret that holds another
 * is masked whole.
 */
export function maskIn(text: string, secrets: ReadonlySet<string>): string {
  let out = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) if (out.includes(secret)) out = out.split(secret).join('***');
  return out;
}

/**
 * What of a connector's http(s) URL is a credential, as a receiver's answer may quote it: its path
 * and query together, its path alone (an answer that names the path it was sent to, "Cannot POST
 * /hooks/…"), and each query value, as written and decoded (those of SHORTEST_SECRET characters or
 * more). None for a URL of "/" and no query.
 */
export function urlPartsOf(text: string): string[] {
  const whole = urlPathOf(text);
  if (whole === undefined) return [];
  const url = new URL(text);
  const values = [...url.searchParams.values()];
  const written = url.search.slice(1).split('&').map((pair) => pair.slice(pair.indexOf('=') + 1)).filter((v) => v !== '');
  // Shorter parts are not looked for (SHORTEST_SECRET): `?v=2` would mask every "2".
  return [whole, ...[url.pathname, ...values, ...written].filter((part) => part.length >= SHORTEST_SECRET)];
}

/** An http(s) URL's path and query, when there is more than "/". */
function urlPathOf(text: string): string | undefined {
  if (!/^https?:\/\//i.test(text)) return undefined;
  try {
    const url = new URL(text);
    return (url.pathname === '/' || url.pathname === '') && url.search === '' ? undefined : `${url.pathname}${url.search}`;
  } catch {
    return undefined;
  }
}

/**
 * A connector's http(s) `url` with its path and query as "***": a Zapier or Make hook path is the
 * credential itself. The origin stays, to tell which endpoint it is. Other URLs as they are.
 */
function maskUrlPath(text: string): string {
  if (urlPathOf(text) === undefined) return text;
  const url = new URL(text);
  const auth = url.username ? `${url.username}${url.password ? `:${url.password}` : ''}@` : '';
  return `${url.protocol}//${auth}${url.host}/***`;
}

/** A URL's credentials as "***": its password, and the values of its query's secret names. */
function maskUrlCredentials(text: string): string {
  return maskQuerySecrets(maskUrlPassword(text));
}

/**
 * The query of a URL with a scheme, from its first `?` (its fragment left out): what follows
 * `name=` in it is a value as written.
 */
const URL_QUERY = /^([a-z][a-z0-9+.-]*:\/\/[^?#]*\?)([^#]*)/is;

/** Whether a query parameter's name (as written) names a secret: `password`, `token`… (isSecretKey). */
function secretParameter(name: string): boolean {
  try {
    return isSecretKey(decodeURIComponent(name.replace(/\+/g, ' ')));
  } catch {
    return isSecretKey(name);
  }
}

/**
 * A URL with the values of its query's secret parameters as "***": the PostgreSQL client takes
 * `?password=…` for the password, as libpq does. The rest as written.
 */
function maskQuerySecrets(text: string): string {
  const query = URL_QUERY.exec(text);
  if (!query) return text;
  const masked = query[2]!.split('&').map((pair) => {
    const at = pair.indexOf('=');
    return at > 0 && at < pair.length - 1 && secretParameter(pair.slice(0, at)) ? `${pair.slice(0, at)}=***` : pair;
  });
  return `${query[1]}${masked.join('&')}${text.slice(query[0].length)}`;
}

/** The values of a URL's secret query parameters, as written and as decoded. */
function querySecretsOf(text: string): string[] {
  const query = URL_QUERY.exec(text);
  if (!query) return [];
  const out: string[] = [];
  for (const pair of query[2]!.split('&')) {
    const at = pair.indexOf('=');
    if (at <= 0 || !secretParameter(pair.slice(0, at))) continue;
    const written = pair.slice(at + 1);
    out.push(written);
    try {
      out.push(decodeURIComponent(written.replace(/\+/g, ' ')));
    } catch {
      // as written only
    }
  }
  return out;
}

/** A URL's password (`postgres://user:password@host/db`, store.url) as "***"; other text as it is. */
function maskUrlPassword(text: string): string {
  if (urlPasswordOf(text) === undefined) return text;
  if (!readableUrl(text)) return text.replace(UNPARSED_PASSWORD, '$1***@$3');
  const url = new URL(text);
  url.password = '***';
  return url.toString();
}

/**
 * A password a URL parser gives up on (a `/`, `#` or `?` not percent-encoded in it): everything
 * between the user's colon and the last `@`. Such a URL is refused as store.url, but whatever shows
 * it (config check, a log) must still not show the password.
 */
const UNPARSED_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)(.*)@([^@]*)$/is;

/**
 * Whether a URL reads as written: a parser reads it, and with one `@` before its query. A second
 * one is a password's `@` not percent-encoded, and the parser takes what follows it for the host
 * (`postgres://user:a@b/c@db/sb` has host `b`).
 */
export function readableUrl(text: string): boolean {
  return URL.canParse(text) && (text.split('?')[0]!.match(/@/g)?.length ?? 0) <= 1;
}

/** A URL's password as written in it, if it has one. */
function urlPasswordOf(text: string): string | undefined {
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/@]*:/i.test(text) || !text.includes('@')) return undefined;
  if (!readableUrl(text)) return UNPARSED_PASSWORD.exec(text)?.[2] || undefined;
  return new URL(text).password || undefined;
}
