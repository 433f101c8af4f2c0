import type { YAMLError } from 'yaml';
import { isSecretKey, maskWritten } from './mask.js';

/**
 * A YAML syntax error as one problem a person can fix: what is wrong, where (line and column), and
 * the lines before it with a caret under the spot. Only the first error is shown: the parser's later
 * ones follow from it more often than not, and fixing the first is what gets the file read.
 */
export function describeYamlError(text: string, errors: readonly YAMLError[]): string[] {
  const [first] = errors;
  if (!first) return [];
  // The library's words, but for the one that names its own API.
  const what = first.code === 'MULTIPLE_DOCS'
    ? 'a second document begins here (a line "---"): a config is one document; join them, or remove the "---"'
    : first.message.split(/ at line \d+, column \d+/)[0]!.split('\n')[0]!;
  const position = first.linePos?.[0];
  if (!position) return [`not valid YAML: ${what}`];
  const lines = text.split(/\r?\n/);
  const width = String(position.line).length;
  const shown: string[] = [];
  for (let n = Math.max(1, position.line - 2); n <= position.line; n++) {
    shown.push(`  ${String(n).padStart(width)} | ${maskLine(lines, n - 1).replaceAll('\t', ' ')}`);
  }
  shown.push(`  ${' '.repeat(width)} | ${' '.repeat(Math.max(0, position.col - 1))}^`);
  const more = errors.length > 1 ? ` (${errors.length - 1} more after it; fix this one first)` : '';
  return [`not valid YAML at line ${position.line}, column ${position.col}: ${what}${more}`, ...shown];
}

/** `key: ` in a block or a flow map, where a value may follow. */
const KEY = /([A-Za-z0-9_-]+)(\s*:)(?=[ \t]|$)/g;

/**
 * A line of the config as the error shows it, with what `config check` would mask masked: a secret
 * key's value, a URL's password, a connector URL's path, and every value under `headers:` or another
 * secret key (its list items, a value on the next line), found by the indentation of the lines above.
 * The log that shows the error is no place for a secret.
 */
function maskLine(lines: readonly string[], index: number): string {
  const line = lines[index] ?? '';
  const parent = parentKey(lines, index);
  if (parent !== undefined && isSecretKey(parent)) {
    // Its content is the secret's value, or a list of them: all of it, whatever it looks like.
    const indent = /^\s*(-\s*)?/.exec(line)![0];
    const content = line.slice(indent.length);
    if (content.trim() === '') return line;
    // `X-Api-Key: value` under headers: the name stays, the value goes.
    const pair = /^([A-Za-z0-9_-]+\s*:[ \t]*)(.*)$/.exec(content);
    if (pair && pair[2] !== '') return `${indent}${pair[1]}${maskWritten(parent, pair[2]!)}`;
    return `${indent}${maskWritten(parent, content)}`;
  }
  let out = '';
  let at = 0;
  for (const match of line.matchAll(KEY)) {
    const index = match.index;
    if (index < at) continue;
    const key = match[1]!;
    const valueStart = index + match[0].length;
    const end = valueEnd(line, valueStart);
    const value = line.slice(valueStart, end);
    const lead = /^[ \t]*/.exec(value)![0];
    const body = value.slice(lead.length);
    // A value that opens a flow map or list holds keys of its own, each masked by its own name.
    if (body.startsWith('{') || body.startsWith('[')) continue;
    out += line.slice(at, valueStart) + lead + maskQuoted(key, body);
    at = end;
  }
  return out + line.slice(at);
}

/**
 * Where a value that starts at `from` ends: inside a flow map or list at its `,`, `}` or `]`; in a
 * block, at a comment (`#` after a space) or the end of the line, so that a value holding a comma or
 * a `#` (an unencoded password) is masked whole.
 */
function valueEnd(line: string, from: number): number {
  const before = line.slice(0, from);
  const inFlow = (before.match(/[{[]/g)?.length ?? 0) > (before.match(/[}\]]/g)?.length ?? 0);
  const rest = line.slice(from);
  const quoted = /^[ \t]*("[^"]*"?|'[^']*'?)/.exec(rest);
  if (quoted) return from + quoted[0].length;
  const stop = inFlow ? /[,}\]]|\s#/.exec(rest) : /\s#/.exec(rest);
  return stop ? from + stop.index : line.length;
}

/** A value as written, quoted or not, masked as `maskWritten` masks it. */
function maskQuoted(key: string, value: string): string {
  const quote = /^["']/.exec(value)?.[0] ?? '';
  const closed = quote !== '' && value.length > 1 && value.endsWith(quote);
  const inner = quote ? value.slice(1, closed ? -1 : undefined) : value.trimEnd();
  const trailing = quote ? '' : value.slice(inner.length);
  const masked = maskWritten(key, inner);
  return masked === inner ? value : `${quote}${masked}${closed ? quote : ''}${trailing}`;
}

/** The key of the block a line is in: the nearest line above it that is indented less. */
function parentKey(lines: readonly string[], index: number): string | undefined {
  const indent = (text: string) => text.length - text.trimStart().length;
  const line = lines[index] ?? '';
  const own = indent(line);
  // A list's items may stand at their key's own indentation (`previousSecrets:` then `- …`).
  const item = line.trimStart().startsWith('-');
  for (let n = index - 1; n >= 0; n--) {
    const text = lines[n] ?? '';
    if (text.trim() === '' || text.trimStart().startsWith('#')) continue;
    if (indent(text) < own || (item && indent(text) === own && /^\s*[A-Za-z0-9_-]+\s*:\s*$/.test(text))) {
      return /^\s*-?\s*([A-Za-z0-9_-]+)\s*:/.exec(text)?.[1];
    }
  }
  return undefined;
}
