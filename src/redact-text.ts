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

/**
 * An object with no object inside, as text: a change of an update record (`{"path": "user.lastName",
 * "from": "Kowalska", "to": "Nowak"}`) that a receiver echoed names the field in `path`, not in the
 * keys of its values. One cut short by an excerpt runs to the end of the text.
 */
const FLAT_OBJECT = /\{[^{}]*(?:\}|$)/g;
const PATH_MEMBER = /"path"\s*:\s*"((?:[^"\\]|\\.)*)"/;
/** `from` or `to` and its value: a string, a number or a word, or an array with no array or object inside. */
const CHANGE_VALUE = /"(from|to)"(\s*:\s*)("(?:[^"\\]|\\.)*"?|\[[^[\]{}]*\]?|[-+\w.]+)/g;

/** The values of a change whose path names a personal field (its last part: `user.additionalData.phone`). */
function redactChanges(text: string): string {
  return text.replace(FLAT_OBJECT, (object) => {
    const path = PATH_MEMBER.exec(object)?.[1];
    if (path === undefined || !isPersonalField(path.split('.').at(-1) ?? '')) return object;
    return object.replace(CHANGE_VALUE, (_member, key: string, colon: string) => `"${key}"${colon}"${REDACTED_TEXT}"`);
  });
}

export function redactPersonalText(text: string): string {
  return redactChanges(text)
    .replace(JSON_MEMBER, (member, key: string, colon: string) => (isPersonalField(key) ? `"${key}"${colon}"${REDACTED_TEXT}"` : member))
    .replace(FORM_FIELD, (field, lead: string, key: string) => (isPersonalField(key) ? `${lead}${key}=${REDACTED_TEXT}` : field))
    .replace(EMAIL, '[email]')
    .replace(PESEL, REDACTED_TEXT);
}
