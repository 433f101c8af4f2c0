import { hourOf, type Run, type TallyEntry } from './history-port.js';
import type { Retrying } from './port.js';

/** What every engine's history does alike (sqlite/history.ts, postgres/history.ts). Pure. */

/** The changes of a successful poll run, as counts of the hour it started in (the console's chart). */
export function changeTallies(run: Run): TallyEntry[] {
  if (run.kind !== 'poll' || run.outcome !== 'ok') return [];
  const hour = hourOf(run.startedAt);
  const out: TallyEntry[] = [];
  for (const [stream, ops] of Object.entries(run.counts)) {
    for (const op of ['created', 'updated', 'deleted']) if ((ops[op] ?? 0) > 0) out.push({ hour, kind: 'change', label: `${stream}:${op}`, n: ops[op]! });
  }
  return out;
}

/**
 * The first text after every text that starts with `prefix` (its last character one up): the ids of
 * a prefix are a range `[prefix, prefixEnd(prefix))` of a bytewise-ordered index.
 */
export function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/** The outcome an attempt is kept with, from the status its settlement gives the delivery. */
export const attemptOutcome = (status: 'done' | 'pending' | 'dead'): 'done' | 'retry' | 'dead' => (status === 'pending' ? 'retry' : status);

/** A LIKE pattern (escape character `\`) for texts that contain `text`. */
export const likeContains = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * The ways `text` can be written inside a JSON body: in each of its case forms (caseForms), as is;
 * with JSON's escapes (`\"`, `\\`); with `/` as `\/`; and with every character past ASCII as
 * `\uXXXX`, as PHP's json_encode writes by default. A body is searched as it was received, so a text
 * is looked for in each of them (LIKE ignores the case of ASCII letters, so of the hex digits too).
 */
export function jsonForms(text: string): string[] {
  return [...new Set(caseForms(text).flatMap(jsonFormsOf))];
}

/** Words with letters past ASCII whose case forms a search combines, at most: 3^3 forms of a text. */
const CASED_WORDS = 3;

/**
 * The text as typed and with each word that has a letter past ASCII in lower case, upper case and
 * title case (`łucja`, `ŁUCJA`, `Łucja`), since the engines' LIKE ignores the case of ASCII letters
 * only (PostgreSQL's ILIKE that of all letters only under a locale that knows them). With more such
 * words than CASED_WORDS, every word takes the same one of the three.
 */
export function caseForms(text: string): string[] {
  const words = text.split(/(\s+)/);
  const cased = words.flatMap((word, i) => (/[^\x20-\x7e\s]/.test(word) && word.toLowerCase() !== word.toUpperCase() ? [i] : []));
  const styles = [(w: string) => w.toLowerCase(), (w: string) => w.toUpperCase(), (w: string) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase()];
  const forms = new Set([text]);
  const count = cased.length <= CASED_WORDS ? styles.length ** cased.length : styles.length;
  for (let n = 0; n < count; n++) {
    // Digit j of n in base 3 is the style of the j-th cased word (or, past CASED_WORDS, n of all).
    forms.add(words.map((word, i) => {
      const j = cased.indexOf(i);
      if (j < 0) return word;
      const style = cased.length <= CASED_WORDS ? Math.floor(n / styles.length ** j) % styles.length : n;
      return styles[style]!(word);
    }).join(''));
  }
  return [...forms];
}

function jsonFormsOf(text: string): string[] {
  const escaped = JSON.stringify(text).slice(1, -1);
  const slashed = escaped.replace(/\//g, '\\/');
  const ascii = (form: string) => form.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return [...new Set([text, escaped, slashed, ascii(escaped), ascii(slashed)])];
}

/** A connector's deliveries (or a range) waiting for another try, as an engine reads them. */
export interface RetryingRow {
  connector: string;
  n: number;
  next_run_at: number;
  last_attempt_at: number | null;
  last_error: string;
}

/** One summary per connector of its rows and ranges: counts add up, the soonest try and the latest error win. */
export function mergeRetrying(rows: readonly RetryingRow[]): Retrying[] {
  const out = new Map<string, Retrying>();
  for (const row of rows) {
    const seen = out.get(row.connector);
    const last = row.last_attempt_at ?? undefined;
    if (!seen) {
      out.set(row.connector, { connector: row.connector, count: row.n, nextRunAt: row.next_run_at, lastError: row.last_error, ...(last === undefined ? {} : { lastAttemptAt: last }) });
      continue;
    }
    seen.count += row.n;
    seen.nextRunAt = Math.min(seen.nextRunAt, row.next_run_at);
    if (last !== undefined && (seen.lastAttemptAt === undefined || last > seen.lastAttemptAt)) {
      seen.lastAttemptAt = last;
      seen.lastError = row.last_error;
    }
  }
  return [...out.values()].sort((a, b) => a.connector.localeCompare(b.connector));
}
