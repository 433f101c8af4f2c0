import { request, type Dispatcher } from 'undici';
import { urlPartsOf } from '../config/mask.js';
import { describeError } from '../errors.js';
import { startDeadline } from './deadline.js';
import { describeExchangeError } from './failure-kind.js';
import { withUrlCredentials } from './url-credentials.js';

/**
 * What a connector's `check()` may say about an endpoint it probes. A configured URL can be a
 * credential (a Zapier or Make hook path, `user:password@`), and check results are shown on public
 * endpoints (/readyz, /status.json, /) and in logs, so only the URL's origin is ever named.
 */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'the configured URL';
  }
}

export type ProbeResult = { ok: true; status: number } | { ok: false; reason: string };

/**
 * Whether a probe's answer says the endpoint is in trouble: a 5xx, but for 501, which says only
 * that it does not take the probe's HEAD (a receiver written for POSTs): it is there and answering.
 */
export function inTrouble(status: number): boolean {
  return status >= 500 && status !== 501;
}

/**
 * A HEAD to `url` with one deadline for the whole exchange (no body is read); the answer's status,
 * or why there was none, naming the origin only.
 */
export async function probe(url: string, options: { headers?: Record<string, string>; dispatcher: Dispatcher; signal: AbortSignal; timeoutMs: number }): Promise<ProbeResult> {
  const deadline = startDeadline(options.timeoutMs, options.signal);
  const target = withUrlCredentials(url, options.headers);
  try {
    const response = await request(target.url, {
      method: 'HEAD', headers: target.headers, dispatcher: options.dispatcher,
      signal: deadline.signal, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs,
    });
    await response.body.dump();
    return { ok: true, status: response.statusCode };
  } catch (error) {
    const why = deadline.expired ? `no answer within ${options.timeoutMs} ms` : withoutUrl(describeExchangeError(error, describeError), url);
    return { ok: false, reason: `cannot reach ${originOf(url)}: ${why}` };
  } finally {
    deadline.clear();
  }
}

/** An error text with the URL named by its origin only: the whole URL, its path and query, and its password replaced. */
export function withoutUrl(text: string, url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return text.split(url).join('<url>');
  }
  let out = text;
  for (const whole of [url, parsed.href]) out = out.split(whole).join(parsed.origin);
  // Longest first, so that the path and query together go before the path alone.
  const parts = [...urlPartsOf(url), parsed.password].filter((part) => part.length > 1).sort((a, b) => b.length - a.length);
  for (const part of parts) out = out.split(part).join('…');
  return out;
}
