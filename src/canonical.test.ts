import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical.js';

/** The two implementations this one replaced (poll: sorted deep copy + JSON.stringify; webhooks: direct). */
function sortKeysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeysDeep);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const item = (value as Record<string, unknown>)[key];
    if (item === undefined) continue;
    Object.defineProperty(out, key, { value: sortKeysDeep(item), enumerable: true, writable: true, configurable: true });
  }
  return out;
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

  it('gives exactly the text the earlier implementations gave (stored ids do not change)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(canonicalJson(value)).toBe(JSON.stringify(sortKeysDeep(value)));
      }),
    );
  });
});
