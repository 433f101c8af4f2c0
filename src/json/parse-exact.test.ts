import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonNumber } from './json-number.js';
import { hasUnusualNumber, parseExact } from './parse-exact.js';
import { stringifyExact } from './stringify-exact.js';
import { numberLiteral } from './test-arbitraries.js';

describe('parseExact', () => {
  it('is JSON.parse for texts whose numbers a double gives back', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        expect(hasUnusualNumber(text)).toBe(false);
        expect(parseExact(text)).toEqual(JSON.parse(text));
      }),
    );
  });

  it('gives back every number literal as written (through stringifyExact)', () => {
    fc.assert(
      fc.property(numberLiteral(), fc.string(), (literal, text) => {
        const json = `{"s":${JSON.stringify(text)},"n":${literal},"list":[${literal},{"n":${literal}}]}`;
        const value = parseExact(json) as { n: unknown };
        expect(String(value.n)).toBe(literal);
        expect(stringifyExact(value)).toBe(json);
      }),
    );
  });

  it('keeps numbers a double holds as plain numbers, and the others as JsonNumber', () => {
    expect(parseExact('[1, 0.5, -3, 1e21, 9007199254740993, 123.4500, -0, 1E2]')).toEqual([
      1, 0.5, -3, new JsonNumber('1e21'), new JsonNumber('9007199254740993'), new JsonNumber('123.4500'), new JsonNumber('-0'), new JsonNumber('1E2'),
    ]);
  });

  it('does not mistake digits inside strings for numbers', () => {
    expect(hasUnusualNumber('{"a":"9007199254740993","b":"1.50\\"","c":2}')).toBe(false);
    expect(hasUnusualNumber('{"a":"x\\\\","b":1.50}')).toBe(true);
  });

  it.each([
    ['[-0]', true], ['[0]', false], ['[-1]', false], ['[123456789012345]', false], ['[1234567890123456]', false],
    ['[9007199254740993]', true], ['[1.5]', false], ['[1.50]', true], ['[1e2]', true], ['[1e+21]', false], ['[1E+21]', true],
  ])('%s holds an unusual number: %s', (text, unusual) => {
    expect(hasUnusualNumber(text)).toBe(unusual);
  });

  it('keeps a "__proto__" key as data, as JSON.parse does', () => {
    const value = parseExact('{"__proto__":{"x":1.0}}') as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
  });

  it('throws on a text JSON.parse refuses', () => {
    expect(() => parseExact('{"a":1.0,}')).toThrow();
    expect(() => parseExact('[1.0')).toThrow();
  });
});
