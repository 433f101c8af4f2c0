/**
 * Formula neutralization for CSV files meant for people (README, "Files for people"). A spreadsheet
 * program that opens a CSV runs a cell as a formula when its text starts with `=`, `+`, `-` or `@`,
 * and some also after a leading tab or carriage return; a value the upstream lets anyone type (a
 * name, a street) could then compute, link or call out. Such a cell gets a leading `'`, which the
 * spreadsheet shows as text and does not display.
 *
 * A cell starting with `+` or `-` is left alone when the rest is only digits, spaces and `()./-`:
 * a phone number (`+48 600 100 200`), a negative amount (`-12.50`) or a date (`-2026/01/02`)
 * cannot compute anything, and prefixing it would change what people see.
 */
const ALWAYS = new Set(['=', '@', '\t', '\r']);
const SIGNS = new Set(['+', '-']);
const NUMBER_LIKE = /^[+-][0-9 ()./-]*$/;

/** Whether a spreadsheet would read this cell text as a formula. */
export function readsAsFormula(text: string): boolean {
  const first = text[0];
  if (first === undefined) return false;
  if (ALWAYS.has(first)) return true;
  return SIGNS.has(first) && !NUMBER_LIKE.test(text);
}

/** The cell text as a spreadsheet shows it without running it. */
export function neutralizeFormula(text: string): string {
  return readsAsFormula(text) ? `'${text}` : text;
}
