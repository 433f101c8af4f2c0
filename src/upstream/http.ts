import { pipeline, Transform, type Readable } from 'node:stream';
import { FormData, request, type Dispatcher } from 'undici';
import { maskIn, SHORTEST_SECRET } from '../config/mask.js';
import { reworded, type BridgeError } from '../errors.js';
import { decodedBody } from './content-encoding.js';
import { errorFromStatus, errorFromThrown, tooLarge } from './errors.js';

/**
 * One HTTP exchange with the upstream: request, status check, body read, all under one overall
 * timeout (for a `stream` exchange, until its headers) and the caller's signal. Knows nothing of
 * tokens or retries (client.ts does). The body is always consumed or destroyed, so the keep-alive
 * connection goes back to the pool.
 */
export interface Exchange {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string>;
  form?: Record<string, string>;
  /** Forces urlencoded (the OAuth token request). */
  urlencoded?: boolean;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /**
   * A body read as a stream, of any length (the full lists): the overall timeout ends when the
   * headers arrive, and the body is bounded by its pauses instead (undici's bodyTimeout, the same
   * timeoutMs). A 183 MB students list over a link slower than 6 MB/s cannot arrive whole within
   * 30 s, and no cycle would ever succeed.
   */
  stream?: boolean;
}

/** An answer's body, decoded (content-encoding.ts): read it by iterating. */
export type BodyStream = Readable;

export interface HttpOptions {
  baseUrl: string;
  dispatcher: Dispatcher;
  timeoutMs: number;
  formEncoding: 'multipart' | 'urlencoded';
  now: () => number;
  /** Our credentials (upstream.token, upstream.clientSecret): masked in what the upstream says back. */
  secrets?: readonly string[];
  /** The largest body of a `stream` exchange, decoded (upstream.maxListBytes). */
  listLimitBytes?: number;
}

/** The default of upstream.maxListBytes. */
export const LIST_LIMIT_BYTES = 1024 * 1024 * 1024;

/**
 * The credentials an answer may echo: ours, and those this exchange sent (its bearer token, a
 * secret of its form). An error's text quotes what the upstream said, and goes to the log and the CLI.
 */
function credentialsOf(exchange: Exchange, secrets: readonly string[]): Set<string> {
  const found = new Set(secrets);
  for (const [name, value] of Object.entries(exchange.headers ?? {})) {
    if (name.toLowerCase() !== 'authorization') continue;
    found.add(value);
    found.add(value.replace(/^\S+\s+/, ''));
  }
  for (const [name, value] of Object.entries(exchange.form ?? {})) if (/secret|password|token/i.test(name)) found.add(value);
  return new Set([...found].filter((value) => value.length >= SHORTEST_SECRET));
}

/** Error bodies are informational; a proxy's 5 MB HTML page is not read whole. */
const ERROR_BODY_LIMIT = 64 * 1024;

/** `read` gets the body and the answer's headers (a list's paging signs may be in them: list/headers.ts). */
export type Http = <T>(exchange: Exchange, read: (body: BodyStream, headers: ResponseHeaders) => Promise<T>) => Promise<T>;

export type ResponseHeaders = Record<string, string | string[] | undefined>;

export function createHttp(options: HttpOptions): Http {
  const base = options.baseUrl.replace(/\/+$/, '');
  return async (exchange, read) => {
    const timer = new AbortController();
    const timeout = setTimeout(() => timer.abort(new Error('upstream timeout')), options.timeoutMs);
    const signal = exchange.signal ? AbortSignal.any([exchange.signal, timer.signal]) : timer.signal;
    let received: BodyStream | undefined;
    let body: BodyStream | undefined;
    let answer: { status: number; contentType: string | undefined } | undefined;
    try {
      const response = await request(urlOf(base, exchange), {
        dispatcher: options.dispatcher,
        method: exchange.method,
        headers: { accept: 'application/json', ...exchange.headers, ...bodyHeaders(exchange, options.formEncoding) },
        body: bodyOf(exchange, options.formEncoding),
        signal,
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      });
      received = response.body;
      answer = { status: response.statusCode, contentType: [response.headers['content-type']].flat()[0] };
      body = decodedBody(received, response.headers['content-encoding']);
      // The other answers are read whole, bounded by their reader (envelope.ts).
      if (exchange.stream) body = bounded(body, options.listLimitBytes ?? LIST_LIMIT_BYTES);
      if (exchange.stream) clearTimeout(timeout);
      if (response.statusCode < 200 || response.statusCode >= 300) {
        const text = maskIn(await readLimited(body, ERROR_BODY_LIMIT), credentialsOf(exchange, options.secrets ?? []));
        throw errorFromStatus(response.statusCode, text, response.headers['retry-after'], options.now(), response.headers.location);
      }
      return await read(body, response.headers);
    } catch (error) {
      const reason = exchange.signal?.aborted ? 'aborted' : timer.signal.aborted ? 'timeout' : undefined;
      throw inCall(errorFromThrown(error, reason, options.timeoutMs, received !== undefined), exchange, answer);
    } finally {
      clearTimeout(timeout);
      for (const stream of new Set([body, received])) {
        if (stream && !stream.destroyed) {
          // A body left half read (its reader threw) errors as it is destroyed: nobody listens for that.
          stream.on('error', () => {});
          stream.destroy();
        }
      }
    }
  };
}

/**
 * An upstream error named by its call: `GET /api/v2/students: upstream answered HTTP 502`, and an
 * answer that is not JSON with its status and content type (an HTML page of a proxy, say). The query
 * is left out: it may name a person. What the reader threw of its own (the store's) is left alone.
 */
function inCall(error: BridgeError, exchange: Exchange, answer: { status: number; contentType: string | undefined } | undefined): BridgeError {
  // Named already: the failure of another call that aborted this one (the cycle's other list).
  if (!error.code.startsWith('upstream.') || error.code === 'upstream.aborted' || /^(GET|POST|PATCH|DELETE) \//.test(error.message)) return error;
  const seen = error.code === 'upstream.invalid_json' && answer ? ` (HTTP ${answer.status}, ${answer.contentType ? `Content-Type ${answer.contentType}` : 'no Content-Type'})` : '';
  return reworded(error, `${exchange.method} ${exchange.path}: ${error.message}${seen}`, error.cause ?? error);
}

function urlOf(base: string, exchange: Exchange): string {
  const query = exchange.query ? `?${new URLSearchParams(exchange.query).toString()}` : '';
  return `${base}${exchange.path}${query}`;
}

function isUrlencoded(exchange: Exchange, encoding: 'multipart' | 'urlencoded'): boolean {
  return exchange.urlencoded === true || encoding === 'urlencoded';
}

function bodyHeaders(exchange: Exchange, encoding: 'multipart' | 'urlencoded'): Record<string, string> {
  // Multipart sets its own content-type with the boundary.
  if (exchange.form && isUrlencoded(exchange, encoding)) return { 'content-type': 'application/x-www-form-urlencoded' };
  return {};
}

function bodyOf(exchange: Exchange, encoding: 'multipart' | 'urlencoded'): string | FormData | undefined {
  if (!exchange.form) return undefined;
  if (isUrlencoded(exchange, encoding)) return new URLSearchParams(exchange.form).toString();
  const form = new FormData();
  for (const [name, value] of Object.entries(exchange.form)) form.append(name, value);
  return form;
}

/**
 * The body, refused with `upstream.too_large` once more than `limit` bytes came (decoded): an answer
 * that never ends (an endless list, a compressed bomb) would otherwise fill the memory or the store.
 */
function bounded(body: BodyStream, limit: number): BodyStream {
  let size = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      done(size <= limit ? null : tooLarge(limit, 'upstream.maxListBytes'), chunk);
    },
  });
  // pipeline destroys both with the first error, as decodedBody's does.
  return pipeline(body, counter, () => {}) as Transform;
}

/**
 * Reads at most `limit` bytes as UTF-8 text (lenient: it is only shown in an error, so a body that
 * breaks off, or does not decode, gives what came before).
 */
export async function readLimited(body: BodyStream, limit: number): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const buffer = chunk as Buffer;
      parts.push(buffer);
      size += buffer.length;
      if (size >= limit) break;
    }
  } catch {
    // what came before is all there is
  }
  return Buffer.concat(parts).subarray(0, limit).toString('utf8');
}
