import { describe, expect, it } from 'vitest';
import { expandValue, type ExpandProblem } from './expand.js';

describe('expandValue', () => {
  const env = { TOKEN: 'abc', EMPTY: '', PORT: '9000' };
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
    // Text that is not a whole reference stays as written.
    ['${1}', '${1}', []],
    ['a${TOKEN', 'a${TOKEN', []],
    ['${MISSING:-${TOKEN}', '${MISSING:-abc', []],
    ['${TOKEN}}', 'abc}', []],
    ['$${TOKEN}', '$abc', []],
    ['${MISSING:-{"a":1}', '{"a":1', []],
  ];
  it.each(cases)('%j → %j', (input, expected, missing) => {
    const problems: ExpandProblem[] = [];
    expect(expandValue(input, env, problems)).toEqual(expected);
    expect(problems.map((p) => p.variable)).toEqual(missing);
  });

  it('names the key path of a missing variable', () => {
    const problems: ExpandProblem[] = [];
    expandValue({ upstream: { list: ['x', '${NOPE}'] } }, {}, problems);
    expect(problems).toEqual([{ path: ['upstream', 'list', 1], variable: 'NOPE' }]);
  });

  it('never lets a value change the structure', () => {
    const problems: ExpandProblem[] = [];
    expect(expandValue({ a: '${V}' }, { V: 'x\nb: injected' }, problems)).toEqual({ a: 'x\nb: injected' });
  });
});
