import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { BridgeError } from '../errors.js';
import type { BodyStream, Exchange, Http, ResponseHeaders } from './http.js';
import { retryDelay, type RetryPolicy } from './retry.js';
import type { TokenSource } from './token.js';

/**
 * One logical upstream call: authorization, one re-authorization on 401/403, and retries where safe.
 *
 * `safe` marks calls that may be repeated blindly (GETs, the idempotent webhook DELETE, the token
 * request). A POST or PATCH is never repeated after it may have reached the service: a second
 * create would make a second student. The one exception is a 401/403 answer, which means the
 * service refused it before doing anything, so it is repeated once with a fresh token.
 */
export interface CallContext {
  http: Http;
  tokens: TokenSource | undefined;
  clock: Clock;
  policy: RetryPolicy;
  random: () => number;
  log: Logger | undefined;
}

export interface CallSpec<T> extends Exchange {
  safe: boolean;
  read: (body: BodyStream, headers: ResponseHeaders) => Promise<T>;
}

export async function call<T>(ctx: CallContext, spec: CallSpec<T>): Promise<T> {
  const startedAt = ctx.clock.now();
  let attempts = 0;
  let reauthorized = false;
  for (;;) {
    const token = ctx.tokens ? await ctx.tokens.get() : undefined;
    attempts++;
    try {
      const headers = token === undefined ? spec.headers : { ...spec.headers, authorization: `Bearer ${token}` };
      return await ctx.http({ ...spec, ...(headers ? { headers } : {}) }, spec.read);
    } catch (error) {
      // Only the exchange is retried here: what the reader of the body threw (the store, say) is its own.
      if (!(error instanceof BridgeError) || !error.code.startsWith('upstream.')) throw error;
      if (error.code === 'upstream.auth' && token !== undefined && !reauthorized && ctx.tokens?.reject(token)) {
        reauthorized = true;
        attempts--; // a refused token is not a failed attempt of the call itself
        ctx.log?.info({ method: spec.method, path: spec.path }, 'upstream refused the token; authorizing again');
        continue;
      }
      const delay = spec.safe
        ? retryDelay(ctx.policy, { attempts, error, elapsedMs: ctx.clock.now() - startedAt, random: ctx.random() })
        : undefined;
      if (delay === undefined) throw error;
      ctx.log?.warn(
        { method: spec.method, path: spec.path, attempt: attempts, delayMs: delay, code: error.code, status: error.status },
        'upstream call failed; retrying',
      );
      await sleep(ctx.clock, delay, spec.signal);
    }
  }
}

async function sleep(clock: Clock, ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await clock.sleep(ms, signal);
  } catch (reason) {
    throw new BridgeError('upstream.aborted', 'upstream call aborted', { cause: reason });
  }
}
