import { redactPersonalText } from './redact-text.js';

/**
 * The upstream's own words in an error message: a JSON string after `answered HTTP <status>:`
 * (upstream/errors.ts quotes them so). JSON's escapes make the end of the string exact.
 */
const UPSTREAM_WORDS = /(answered HTTP \d{3}): "(?:[^"\\]|\\.)*"/g;

/**
 * Free text as the public endpoints show it (/readyz, /status.json, the status page: README
 * "Observe"): without the upstream's own words, which can name the person a call was about (a
 * service's "student Jan Kowalski (jan@…) is locked"), and with personal data replaced as in the
 * log. The full text stays in the log and behind the admin token.
 */
export function publicText(text: string): string {
  return redactPersonalText(text.replace(UPSTREAM_WORDS, '$1'));
}
