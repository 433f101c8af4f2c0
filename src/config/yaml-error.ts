import type { YAMLError } from 'yaml';
import { maskWritten } from './mask.js';

/**
 * A YAML syntax error as one problem a person can fix: what is wrong, where (line and column), and
 * the lines before it with a caret under the spot. Only the first error is shown: the parser's later
 * ones follow from it more often than not, and fixing the first is what gets the file read.
 */
export function describeYamlError(text: string, errors: readonly YAMLError[]): string[] {
  const [first] = errors;
  if (!first) return [];
  const what = first.message.split(/ at line \d+, column \d+/)[0]!.split('\n')[0]!;
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

/** `key: value` in a block or a flow map; the value up to a comma, a closing bracket or a comment. */
const PAIR = /([A-Za-z0-9_-]+)(\s*:[ \t]+)("[^"]*"?|'[^']*'?|[^,}\]#]*)/g;

/**
 * A line of the config as the error shows it, with what `config check` would mask masked: a secret
 * key's value, a URL's password, a connector URL's path, and every value under `headers:` (found by
 * the indentation of the lines above). The log that shows the error is no place for a secret.
 */
function maskLine(lines: readonly string[], index: number): string {
  const line = lines[index] ?? '';
  const underHeaders = parentKey(lines, index) === 'headers';
  return line.replace(PAIR, (_match, key: string, colon: string, value: string) => {
    const quote = /^["']/.exec(value)?.[0] ?? '';
    const inner = quote ? value.slice(1, value.endsWith(quote) && value.length > 1 ? -1 : undefined) : value;
    const masked = maskWritten(underHeaders ? 'headers' : key, inner);
    return `${key}${colon}${masked === inner ? value : `${quote}${masked}${quote && value.endsWith(quote) && value.length > 1 ? quote : ''}`}`;
  });
}

/** The key of the block a line is in: the nearest line above it that is indented less. */
function parentKey(lines: readonly string[], index: number): string | undefined {
  const indent = (text: string) => text.length - text.trimStart().length;
  const own = indent(lines[index] ?? '');
  for (let n = index - 1; n >= 0; n--) {
    const text = lines[n] ?? '';
    if (text.trim() === '' || text.trimStart().startsWith('#') || indent(text) >= own) continue;
    return /^\s*-?\s*([A-Za-z0-9_-]+)\s*:/.exec(text)?.[1];
  }
  return undefined;
}
