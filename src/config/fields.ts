import { isIP } from 'node:net';
import { z } from 'zod';

/**
 * Field builders shared by every config schema. Values that came through `${NAME}` expansion are
 * strings, so numbers and booleans also accept their string spelling; an empty string means "not set"
 * for optional secrets (README "Configuration" uses `${VAR:-}`).
 */
const NUMERIC = /^\s*-?\d+(\.\d+)?\s*$/;

export interface Bounds {
  min?: number;
  max?: number;
  /** Exclusive lower bound. */
  gt?: number;
}

function bounded(schema: z.ZodNumber, bounds: Bounds): z.ZodNumber {
  let out = schema;
  if (bounds.min !== undefined) out = out.min(bounds.min);
  if (bounds.max !== undefined) out = out.max(bounds.max);
  if (bounds.gt !== undefined) out = out.gt(bounds.gt);
  return out;
}

const fromString = (v: unknown) => (typeof v === 'string' && NUMERIC.test(v) ? Number(v) : v);

export const num = (bounds: Bounds = {}) => z.preprocess(fromString, bounded(z.number(), bounds));

export const int = (bounds: Bounds = {}) => z.preprocess(fromString, bounded(z.number().int(), bounds));

/** The longest a Node.js timer waits: a longer one fires after 1 ms. */
export const TIMER_MAX_MS = 2 ** 31 - 1;

/** Milliseconds a timer waits: a timeout, an interval. */
export const millis = (min = 1) =>
  z.preprocess(fromString, z.number().int().min(min).max(TIMER_MAX_MS, { message: `at most ${TIMER_MAX_MS} ms (about 24 days): a longer timer would fire at once` }));

export const bool = () =>
  z.preprocess((v) => (v === 'true' ? true : v === 'false' ? false : v), z.boolean());

/** An optional string where "" (an unset `${VAR:-}`) counts as absent. */
export const optionalString = () =>
  z.preprocess((v) => (v === '' || v === null ? undefined : v), z.string().optional());

export const httpUrl = () =>
  z.string().refine((v) => {
    try {
      const url = new URL(v);
      return url.protocol === 'http:' || url.protocol === 'https:';
    } catch {
      return false;
    }
  }, 'must be an http(s) URL');

/** Why a listen address is not one, or undefined: an IP address or a host name, nothing around it. */
function badHost(host: string): string | undefined {
  if (host.trim() === '') return 'empty: write an address to listen on (127.0.0.1 for this machine only, 0.0.0.0 for every interface)';
  if (isIP(host) !== 0) return undefined;
  if (/^\d+(\.\d+){3}$/.test(host)) return `"${host}" is not an IPv4 address (each part is 0-255)`;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(host)) return `"${host}" is a URL: write the address alone (server.publicUrl takes the URL the upstream calls)`;
  if (/^[^:]+:\d+$/.test(host)) return `"${host}" has a port: write it in server.port`;
  const label = /^(?!-)[A-Za-z0-9_-]{1,63}(?<!-)$/;
  if (host.length > 253 || !host.replace(/\.$/, '').split('.').every((part) => label.test(part))) return `${JSON.stringify(host)} is not an IP address or host name`;
  return undefined;
}

/** An address to listen on (server.host). */
export const listenHost = () =>
  z.string().superRefine((v, ctx) => {
    const why = badHost(v);
    if (why) ctx.addIssue({ code: 'custom', message: why });
  });

/**
 * The URL the upstream calls us at, without /webhooks/v2 (added to it): a URL with a query, a
 * fragment or credentials, or one ending in the callback's path, would register a callback URL
 * nothing answers.
 */
export const publicUrl = () =>
  httpUrl().superRefine((v, ctx) => {
    if (!URL.canParse(v)) return; // httpUrl says so
    const url = new URL(v);
    const why = url.search || url.hash ? 'has a query or fragment: /webhooks/v2 is added after its path'
      : url.username || url.password ? 'holds credentials: the upstream would be sent them with every callback, and logs would show them'
        : /\/webhooks\/v2\/?$/.test(url.pathname) ? 'ends in /webhooks/v2, which is added to it: write the URL before it'
          : undefined;
    if (why) ctx.addIssue({ code: 'custom', message: why });
  });

/** An IANA timezone name that this Node.js knows (e.g. Europe/Warsaw). */
export const timezone = () =>
  z.string().refine((v) => {
    try {
      new Intl.DateTimeFormat('en', { timeZone: v });
      return true;
    } catch {
      return false;
    }
  }, 'not a known IANA timezone (e.g. Europe/Warsaw)');

/** Headers a connector sets on every signed request itself (src/connectors/signed-post.ts). */
const OWN_HEADERS = new Set(['content-type', 'idempotency-key', 'webhook-signature', 'user-agent']);
/** Headers the HTTP client sets for each request: one given by hand breaks the request or its connection. */
const CLIENT_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'host', 'upgrade', 'te', 'trailer', 'expect', 'proxy-connection']);
/** A header name (RFC 9110's token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * A connector's extra request headers. What it sets itself, what the HTTP client sets, and a name
 * or value no request can carry are refused here: at delivery time each failed every attempt
 * until the records expired, or was silently not sent.
 */
export const extraHeaders = () =>
  z.record(z.string(), z.string()).default({}).superRefine((headers, ctx) => {
    for (const [name, value] of Object.entries(headers)) {
      const lower = name.toLowerCase();
      const refuse = (message: string) => ctx.addIssue({ code: 'custom', path: [name], message });
      if (!HEADER_NAME.test(name)) refuse('not a valid header name (letters, digits and -, no spaces or colons)');
      else if (OWN_HEADERS.has(lower)) refuse(`schoolbridge sets ${name} on every request itself; remove it`);
      else if (CLIENT_HEADERS.has(lower)) refuse(`the HTTP client sets ${name} for each request; remove it`);
      else if (/[\r\n\0]/.test(value)) refuse('a header value cannot hold a line break');
    }
  });
