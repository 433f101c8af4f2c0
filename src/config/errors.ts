import type { z } from 'zod';
import { isSecretKey } from './mask.js';

/** Formats a key path the way a user reads it in YAML: `connectors[1].spreadsheetId`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(top level)' : out;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length]!;
}

/** The closest known key to a misspelled one, if it is close enough to be a typo. */
export function suggestKey(unknown: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = distance(unknown.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(unknown.length / 3)) ? best : undefined;
}

/**
 * One line per problem, each naming the key path. `knownKeys` gives the valid keys at a path and
 * `valueAt` the value written there, for "did you mean" suggestions.
 */
export function formatIssues(
  issues: readonly z.core.$ZodIssue[],
  knownKeys: (path: readonly PropertyKey[]) => string[],
  valueAt: (path: readonly PropertyKey[]) => unknown = () => undefined,
  writtenAt: (path: readonly PropertyKey[]) => unknown = valueAt,
): string[] {
  const lines: string[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const hint = suggestKey(key, knownKeys(issue.path));
        lines.push(`${formatPath([...issue.path, key])}: unknown key${hint ? ` (did you mean "${hint}"?)` : ''}`);
      }
    } else if (issue.code === 'invalid_type' && valueAt(issue.path) === undefined) {
      lines.push(`${formatPath(issue.path)}: required`);
    } else if (issue.code === 'invalid_type') {
      lines.push(typeLine(issue, valueAt(issue.path), writtenAt(issue.path)));
    } else if (valueAt(issue.path) === null) {
      // `baseUrl:` with nothing after it: whatever the key takes, it got nothing.
      lines.push(`${formatPath(issue.path)}: ${describeValue(null)}`);
    } else if (issue.code === 'invalid_union' && 'discriminator' in issue) {
      lines.push(discriminatorLine(issue, valueAt));
    } else if ((issue.code === 'too_big' || issue.code === 'too_small') && issue.origin === 'number' && /^Too (big|small):/.test(issue.message)) {
      lines.push(boundLine(issue, valueAt(issue.path), writtenAt(issue.path)));
    } else if (issue.code === 'too_small' && issue.origin === 'string' && Number(issue.minimum) === 1 && valueAt(issue.path) === '') {
      lines.push(`${formatPath(issue.path)}: empty${fromVariables('', writtenAt(issue.path))}: give it a value, or remove the key`);
    } else if (issue.code === 'invalid_value' && issue.values.every((option) => typeof option === 'string')) {
      lines.push(valueLine(issue, valueAt(issue.path), writtenAt(issue.path)));
    } else if (valueAt(issue.path) === '' && emptyVariable(writtenAt(issue.path)) !== undefined) {
      // A variable that is set but empty gave the value: the variable is what to fix.
      lines.push(`${formatPath(issue.path)}: ${issue.message} (from \${${emptyVariable(writtenAt(issue.path))!}}, which is set but empty)`);
    } else {
      lines.push(`${formatPath(issue.path)}: ${issue.message}`);
    }
  }
  return lines;
}

/** `connectors[0].type: unknown value "fiel" (did you mean "file"?); one of: file, webhook, …`. */
function discriminatorLine(issue: z.core.$ZodIssueInvalidUnion & { discriminator?: string; options?: unknown[] }, valueAt: (path: readonly PropertyKey[]) => unknown): string {
  const discriminator = String(issue.discriminator);
  // The path names the discriminating key already in some zod versions, the object in others.
  const path = issue.path[issue.path.length - 1] === discriminator ? issue.path : [...issue.path, discriminator];
  const options = (issue.options ?? []).map(String);
  const value = valueAt(path);
  if (typeof value !== 'string' || options.length === 0) return `${formatPath(path)}: ${issue.message}`;
  const hint = suggestKey(value, options);
  return `${formatPath(path)}: unknown value "${value}"${hint ? ` (did you mean "${hint}"?)` : ''}; one of: ${options.join(', ')}`;
}

/** `connectors[0].streams[1]: unknown value "invoice" (did you mean "invoices"?); one of: students, …`, zod's own words name no value. */
function valueLine(issue: z.core.$ZodIssueInvalidValue, value: unknown, written: unknown): string {
  const options = issue.values.map(String);
  const secret = issue.path.some((part) => typeof part === 'string' && isSecretKey(part));
  if (typeof value !== 'string' || secret) return `${formatPath(issue.path)}: ${secret ? 'not a value it takes' : `expected one of ${options.join(', ')}, got ${describeValue(value)}`}`;
  const hint = suggestKey(value, options);
  return `${formatPath(issue.path)}: unknown value "${value}"${fromVariables(value, written)}${hint ? ` (did you mean "${hint}"?)` : ''}; one of: ${options.join(', ')}`;
}

/** What a key takes, in the words of someone writing YAML. */
const EXPECTED: Record<string, string> = {
  number: 'a number', int: 'a whole number', string: 'text', boolean: 'true or false', object: 'keys under it', array: 'a list',
};

function describeValue(value: unknown): string {
  if (value === null) return 'nothing (the key is empty: give it a value, or remove it)';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'keys under it';
  if (typeof value === 'string') return `the text ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === 'number' && Number.isNaN(value)) return 'not a number';
  return `${typeof value === 'boolean' ? '' : 'the number '}${String(value)}`;
}

/**
 * `server.port: expected a number, got the text "80a" (from ${PORT})`: a value of the wrong type is
 * named as written, with the variable it came from, and the usual fix where there is one.
 */
function typeLine(issue: z.core.$ZodIssueInvalidType, value: unknown, written: unknown): string {
  const expected = EXPECTED[issue.expected] ?? issue.expected;
  const from = fromVariables(value, written);
  // A secret is named by its type only: the line goes to logs.
  const secret = issue.path.some((part) => typeof part === 'string' && isSecretKey(part));
  const got = secret ? describeType(value) : describeValue(value);
  let hint = '';
  // The parser has read the number already: 0123 came out as 123, so the fix is to quote what was written.
  if (issue.expected === 'string' && (typeof value === 'number' || typeof value === 'boolean')) hint = ': quote it as written (in "…")';
  else if (issue.expected === 'array' && !secret && (typeof value === 'string' || typeof value === 'number')) hint = `: write it as a list, [${String(value)}]`;
  return `${formatPath(issue.path)}: expected ${expected}, got ${got}${from}${hint}`;
}

/**
 * The variable a value was written as, when it is one whole `${NAME}` with no default: an empty
 * value then came from the variable set but empty (an unset one is a problem of its own).
 */
function emptyVariable(written: unknown): string | undefined {
  return typeof written === 'string' ? /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(written)?.[1] : undefined;
}

/** The variables a value was written with, for "(from ${PORT})"; empty when it was written as is. */
function fromVariables(value: unknown, written: unknown): string {
  const variables = typeof written === 'string' ? [...written.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => `\${${m[1]}}`) : [];
  return variables.length > 0 && written !== value ? ` (from ${variables.join(', ')})` : '';
}

/** `server.port: 70000 is too big (from ${PORT}); at most 65535`: zod's own words name neither the value nor the variable. */
function boundLine(issue: z.core.$ZodIssueTooBig | z.core.$ZodIssueTooSmall, value: unknown, written: unknown): string {
  const big = issue.code === 'too_big';
  const bound = Number(big ? (issue as z.core.$ZodIssueTooBig).maximum : (issue as z.core.$ZodIssueTooSmall).minimum);
  const inclusive = issue.inclusive !== false;
  const limit = big ? (inclusive ? `at most ${bound}` : `less than ${bound}`) : (inclusive ? `at least ${bound}` : `more than ${bound}`);
  const secret = issue.path.some((part) => typeof part === 'string' && isSecretKey(part));
  const shown = (typeof value === 'number' || typeof value === 'string') && !secret ? String(value) : 'the value';
  return `${formatPath(issue.path)}: ${shown} is too ${big ? 'big' : 'small'}${fromVariables(value, written)}; ${limit}`;
}

/** What a value is, without what it says. */
function describeType(value: unknown): string {
  if (value === null || Array.isArray(value) || typeof value === 'object') return describeValue(value);
  return typeof value === 'string' ? 'text' : typeof value === 'boolean' ? 'true or false' : 'a number';
}
