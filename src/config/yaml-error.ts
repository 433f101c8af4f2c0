import type { YAMLError } from 'yaml';

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
    shown.push(`  ${String(n).padStart(width)} | ${(lines[n - 1] ?? '').replaceAll('\t', ' ')}`);
  }
  shown.push(`  ${' '.repeat(width)} | ${' '.repeat(Math.max(0, position.col - 1))}^`);
  const more = errors.length > 1 ? ` (${errors.length - 1} more after it; fix this one first)` : '';
  return [`not valid YAML at line ${position.line}, column ${position.col}: ${what}${more}`, ...shown];
}
