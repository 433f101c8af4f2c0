/**
 * Personal data inside free text, such as an error message that quotes what a receiver answered
 * (receivers echo what they were sent: an invoice's buyer, e-mail, PESEL). Logs pass such texts
 * through here (src/log.ts); the full text stays in the store for the admin API and the CLI.
 *
 * Replaced: values of fields whose name looks personal or secret, as JSON (`"email": "…"`) or as a
 * form (`email=…`); e-mail addresses anywhere; runs of exactly 11 digits (a PESEL) anywhere. It is a
 * heuristic over text that may be cut short (an excerpt), so it errs on the side of replacing.
 */
const PERSONAL_PARTS = [
  'name', 'mail', 'phone', 'mobile', 'pesel', 'nip', 'street', 'address', 'zip', 'postal', 'city', 'birth',
  'buyer', 'customer', 'login', 'skype', 'iban', 'account', 'password', 'secret', 'token', 'authorization',
];

export const REDACTED_TEXT = '[redacted]';

/** A field name that looks like it holds personal data or a secret (any case, anywhere in the name). */
export function isPersonalField(name: string): boolean {
  const lower = name.toLowerCase();
  return PERSONAL_PARTS.some((part) => lower.includes(part));
}

/** A JSON member: `"key"` `:` then a string (its closing quote may be cut off), a number or a word. */
const JSON_MEMBER = /"((?:[^"\\]|\\.){1,64})"(\s*:\s*)("(?:[^"\\]|\\.)*"?|[-+\w.]+)/g;
/** A form field: `key=value` up to `&`, whitespace or a quote. */
const FORM_FIELD = /(^|[?&\s])([A-Za-z_][\w.-]{0,63})=([^&\s"']*)/g;
const EMAIL = /[\w.+%-]+@[\w-]+(?:\.[\w-]+)+/g;
const PESEL = /(?<!\d)\d{11}(?!\d)/g;

export function redactPersonalText(text: string): string {
  return text
    .replace(JSON_MEMBER, (member, key: string, colon: string) => (isPersonalField(key) ? `"${key}"${colon}"${REDACTED_TEXT}"` : member))
    .replace(FORM_FIELD, (field, lead: string, key: string) => (isPersonalField(key) ? `${lead}${key}=${REDACTED_TEXT}` : field))
    .replace(EMAIL, '[email]')
    .replace(PESEL, REDACTED_TEXT);
}
