import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical.js';

/**
 * The webhook intake's earlier implementation, whose text is in stored dedupe keys. (The poll's earlier
 * one, JSON.stringify of a key-sorted copy, put integer-like keys such as "0" first, as JavaScript
 * orders them; it hashed only roster rows and compared array leaves, whose keys are never numeric.)
 */
function earlier(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => earlier(item)).join(',')}]`;
  const record = value as Record<string, unknown>;
  return `{${Object.keys(record).sort().map((key) => `${JSON.stringify(key)}:${earlier(record[key])}`).join(',')}}`;
}

describe('canonicalJson', () => {
  it.each([
    [{ b: 1, a: { d: 2, c: [3, { f: 1, e: 0 }] } }, '{"a":{"c":[3,{"e":0,"f":1}],"d":2},"b":1}'],
    [{ street: 'Kwiatowa 4/5 ', city: 'Łódź' }, '{"city":"Łódź","street":"Kwiatowa 4/5 "}'],
    [{ a: undefined, b: null }, '{"b":null}'],
    [[], '[]'],
  ])('%j → %s', (value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  it('sorts integer-like keys as text, like every other key', () => {
    expect(canonicalJson({ b: 1, 10: 2, '': 3, 9: 4 })).toBe('{"":3,"10":2,"9":4,"b":1}');
  });

  it('keeps a "__proto__" key as data', () => {
    const value = JSON.parse('{"__proto__":{"x":1},"a":2}') as unknown;
    expect(canonicalJson(value)).toBe('{"__proto__":{"x":1},"a":2}');
  });

  it('parses back to an equal value and is stable', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it('gives exactly the text the intake gave before (stored dedupe keys do not change)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(value)).toBe(earlier(value));
      }),
    );
  });
});
