import { isRedactedKey } from '../log.js';
import type { DeliveryOutcome } from '../connectors/types.js';

/** Shorter values are not looked for: "abc" would mask every word holding it, and no real credential is that short. */
const SHORTEST = 6;

/**
 * The credentials in a connector's config block: values of keys that name secrets (`secret`,
 * `token`, `private_key`, …), every header value (an API key of the receiver), and the path of an
 * http(s) `url` (a Zapier or Make hook path is the credential itself): what `config check` masks.
 */
export function secretsOf(config: unknown, key = '', out = new Set<string>()): Set<string> {
  if (typeof config === 'string') {
    if (isRedactedKey(key) || key === 'headers') add(out, config);
    if (key === 'url') add(out, urlPath(config));
    return out;
  }
  if (Array.isArray(config)) for (const item of config) secretsOf(item, key, out);
  else if (config !== null && typeof config === 'object') {
    for (const [k, v] of Object.entries(config)) secretsOf(v, key === 'headers' ? 'headers' : k, out);
  }
  return out;
}

function add(out: Set<string>, value: string | undefined): void {
  if (value !== undefined && value.length >= SHORTEST) out.add(value);
}

function urlPath(text: string): string | undefined {
  if (!/^https?:\/\//i.test(text)) return undefined;
  try {
    const url = new URL(text);
    const path = `${url.pathname}${url.search}`;
    return path === '/' ? undefined : path;
  } catch {
    return undefined;
  }
}

/**
 * The outcomes with every credential of the connector in their errors' messages as "***": a
 * receiver's answer, quoted in the error, may echo what it was sent (`invalid key apikey-…`), and
 * the error is kept, listed by `deliveries list` and logged. Longest first, so a secret that holds
 * another is masked whole. The errors are changed in place: outcomes of a batch may share one.
 */
export function maskOutcomes(outcomes: DeliveryOutcome[], secrets: ReadonlySet<string>): DeliveryOutcome[] {
  if (secrets.size === 0) return outcomes;
  const longestFirst = [...secrets].sort((a, b) => b.length - a.length);
  for (const outcome of outcomes) {
    if (outcome.status === 'done') continue;
    let message = outcome.error.message;
    for (const secret of longestFirst) if (message.includes(secret)) message = message.split(secret).join('***');
    if (message !== outcome.error.message) outcome.error.message = message;
  }
  return outcomes;
}
