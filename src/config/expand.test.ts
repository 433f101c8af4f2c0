import { describe, expect, it } from 'vitest';
import { expandValue, type ExpandProblem } from './expand.js';

describe('expandValue', () => {
  const env = { TOKEN: 'abc', EMPTY: '', PORT: '9000' };
  // Each case: the value, what it expands to, and the variables reported unset ("!" + text: a malformed reference).
  const cases: [unknown, unknown, string[]][] = [
    ['${TOKEN}', 'abc', []],
    ['Bearer ${TOKEN}!', 'Bearer abc!', []],
    ['${MISSING:-fallback}', 'fallback', []],
    ['${MISSING:-}', '', []],
    ['${EMPTY:-x}', 'x', []],
    ['${EMPTY}', '', []],
    ['${MISSING}', '', ['MISSING']],
    ['$TOKEN', '$TOKEN', []],
    [{ a: ['${PORT}', 1, null] }, { a: ['9000', 1, null] }, []],
    // A default that refers to another variable, taken only when needed.
    ['${MISSING:-${TOKEN}}', 'abc', []],
    ['${TOKEN:-${NOPE}}', 'abc', []],
    ['${MISSING:-${NOPE}}', '', ['NOPE']],
    ['${MISSING:-${EMPTY:-${PORT}}}/x', '9000/x', []],
    ['${MISSING:-http://${TOKEN}:${PORT}}', 'http://abc:9000', []],
    ['${TOKEN}}', 'abc}', []],
    ['$${TOKEN}', '$abc', []],
    ['${MISSING:-{"a":1}', '{"a":1', []],
    // A "${" that does not begin a whole reference is a problem, not text to keep.
    ['${1}', '${1}', ['!${1}']],
    ['a${TOKEN', 'a${TOKEN', ['!${TOKEN']],
    ['${MISSING:-${TOKEN}', '${MISSING:-${TOKEN}', ['!${MISSING:-${TOKEN}']],
    ['${TOKEN-x}', '${TOKEN-x}', ['!${TOKEN-x}']],
    ['${TOKEN:?set it}', '${TOKEN:?set it}', ['!${TOKEN:?set it}']],
    ['${ TOKEN }', '${ TOKEN }', ['!${ TOKEN }']],
    ['${MISSING:-${ TOKEN }}', '${ TOKEN }', ['!${ TOKEN }']],
  ];
  it.each(cases)('%j → %j', (input, expected, missing) => {
    const problems: ExpandProblem[] = [];
    expect(expandValue(input, env, problems)).toEqual(expected);
    expect(problems.map((p) => ('malformed' in p ? `!${p.malformed}` : p.variable))).toEqual(missing);
  });

  it('says which references a variable reported unset is the default of', () => {
    const problems: ExpandProblem[] = [];
    expandValue({ dir: '${A:-${B:-${C}}}' }, {}, problems);
    expect(problems).toEqual([{ path: ['dir'], variable: 'C', within: ['A', 'B'] }]);
  });

  it('names the key path of a missing variable', () => {
    const problems: ExpandProblem[] = [];
    expandValue({ upstream: { list: ['x', '${NOPE}'] } }, {}, problems);
    expect(problems).toEqual([{ path: ['upstream', 'list', 1], variable: 'NOPE', within: [] }]);
  });

  it('never lets a value change the structure', () => {
    const problems: ExpandProblem[] = [];
    expect(expandValue({ a: '${V}' }, { V: 'x\nb: injected' }, problems)).toEqual({ a: 'x\nb: injected' });
  });
});
