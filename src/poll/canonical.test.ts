import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, shortHash } from './canonical.js';

describe('canonicalJson', () => {
  it.each([
    [{ b: 1, a: { d: 2, c: [3, { f: 1, e: 0 }] } }, '{"a":{"c":[3,{"e":0,"f":1}],"d":2},"b":1}'],
    [{ street: 'Kwiatowa 4/5 ', city: 'Łódź' }, '{"city":"Łódź","street":"Kwiatowa 4/5 "}'],
    [{ a: undefined, b: null }, '{"b":null}'],
    [[], '[]'],
  ])('%j → %s', (value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
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
});

describe('shortHash', () => {
  it('is 12 hex digits and separates its parts', () => {
    expect(shortHash('a', 'bc')).toMatch(/^[0-9a-f]{12}$/);
    expect(shortHash('a', 'bc')).not.toBe(shortHash('ab', 'c'));
    expect(shortHash('a', 'bc')).toBe(shortHash('a', 'bc'));
  });

  it('equals SHA-256 fed part by part, each ended by NUL (ids stay what earlier versions made)', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' }), { maxLength: 5 }), (parts) => {
        const hash = createHash('sha256');
        for (const part of parts) hash.update(part).update('\0');
        expect(shortHash(...parts)).toBe(hash.digest('hex').slice(0, 12));
      }),
    );
  });
});
