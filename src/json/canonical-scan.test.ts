import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../canonical.js';
import { scanJson, stringOf } from './canonical-scan.js';
import { numberLiteral, spaced } from './test-arbitraries.js';

const scan = (text: string, drop?: (key: string) => boolean) => scanJson(text, { maxDepth: 1000, ...(drop ? { drop } : {}) });
const dropOtp = (key: string) => key === 'oneTimePassword';

/** The value without the members `drop` names, at any depth. */
function without(value: unknown, key: string): unknown {
  if (Array.isArray(value)) return value.map((item) => without(item, key));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => k !== key).map(([k, v]) => [k, without(v, key)]));
}

describe('scanJson: canonical text', () => {
  it('is canonicalJson of the parsed value when numbers are written as JavaScript writes them (identities stay)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        expect(scan(text).root.canonical).toBe(canonicalJson(JSON.parse(text)));
        expect(scan(spaced(value)).root.canonical).toBe(canonicalJson(JSON.parse(text)));
      }),
    );
  });

  it('does not depend on key order, whitespace or how a string is escaped', () => {
    const a = scan('{"b":"é","a":[1,{"y":null,"x":true}]}').root.canonical;
    expect(scan('{ "a" : [ 1 , { "x" : true , "y" : null } ] , "\\u0062" : "\\u00e9" }').root.canonical).toBe(a);
    expect(a).toBe('{"a":[1,{"x":true,"y":null}],"b":"é"}');
  });

  it('keeps every number literal as written, so different literals never meet', () => {
    fc.assert(
      fc.property(numberLiteral(), (literal) => {
        expect(scan(`{"n":${literal}}`).root.canonical).toBe(`{"n":${literal}}`);
      }),
    );
    expect(scan('[9007199254740993]').root.canonical).not.toBe(scan('[9007199254740992]').root.canonical);
    expect(scan('[123.4500]').root.canonical).toBe('[123.4500]');
  });

  it('takes the last of repeated keys, as JSON.parse does', () => {
    expect(scan('{"a":1,"b":2,"a":3}').root.canonical).toBe('{"a":3,"b":2}');
  });

  it('sorts by code units and keeps "__proto__" as data', () => {
    expect(scan('{"b":1,"10":2,"":3,"9":4,"__proto__":{"x":1}}').root.canonical).toBe('{"":3,"10":2,"9":4,"__proto__":{"x":1},"b":1}');
  });
});

describe('scanJson: compact text', () => {
  it('is the source itself when it has no whitespace and nothing is dropped', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value);
        expect(scan(text).root.compact).toBe(text);
      }),
    );
  });

  it('drops whitespace between tokens only, and never holds a line break', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const compact = scan(spaced(value)).root.compact;
        expect(compact).toBe(JSON.stringify(value));
        expect(compact).not.toMatch(/[\r\n]/);
      }),
    );
    expect(scan('{ "a" : [ 1.50 , "x y" ] ,\n "a" : 1e2 }').root.compact).toBe('{"a":[1.50,"x y"],"a":1e2}');
  });

  it('leaves dropped members out at any depth, of both texts', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string(), (value, secret) => {
        const withSecret = { oneTimePassword: secret, data: value, list: [{ oneTimePassword: secret, keep: 1 }] };
        const { root, dropped } = scan(spaced(withSecret), dropOtp);
        expect(dropped).toBe(2);
        expect(JSON.parse(root.compact)).toEqual(without(JSON.parse(JSON.stringify(withSecret)), 'oneTimePassword'));
        expect(root.compact).not.toContain('oneTimePassword');
        expect(root.canonical).toBe(canonicalJson(without(JSON.parse(JSON.stringify(withSecret)), 'oneTimePassword')));
      }),
    );
  });

  it('gives members and string values', () => {
    const { root } = scan('{"event":"a\\u002eb","object":{"id":7}}');
    expect(root.members.map((m) => m.key)).toEqual(['event', 'object']);
    expect(stringOf(root.members[0]!.value)).toBe('a.b');
    expect(root.members[1]!.value.members[0]!.value).toMatchObject({ kind: 'number', compact: '7' });
  });
});

describe('scanJson: what it accepts', () => {
  it('accepts exactly what JSON.parse accepts', () => {
    const accepts = (text: string) => {
      try {
        scan(text);
        return true;
      } catch {
        return false;
      }
    };
    const parses = (text: string) => {
      try {
        JSON.parse(text);
        return true;
      } catch {
        return false;
      }
    };
    const mutated = fc.tuple(fc.json(), fc.nat(), fc.constantFrom('', '"', '\\', ',', '}', ']', '-', '.', 'e', '0', ' ', '\u0001', '\\u12', 'tru'))
      .map(([text, at, insert]) => text.slice(0, at % (text.length + 1)) + insert + text.slice(at % (text.length + 1)));
    fc.assert(fc.property(fc.oneof(fc.json(), mutated, fc.string()), (text) => {
      expect(accepts(text)).toBe(parses(text));
    }), { numRuns: 2000 });
  });

  it.each([
    '01', '-', '1.', '.5', '+1', '1e', '1e+', '"\\x"', '"\\u12g4"', '"a\nb"', '{"a" 1}', '{"a":1,}', '[1,]', '[1 2]', 'nul', '{} {}', '',
  ])('rejects %j', (text) => {
    expect(() => scan(text)).toThrow();
    expect(() => JSON.parse(text)).toThrow();
  });

  it('refuses containers nested deeper than maxDepth (the outermost is level 1)', () => {
    const nested = (n: number) => '['.repeat(n) + ']'.repeat(n);
    expect(() => scanJson(nested(64), { maxDepth: 64 })).not.toThrow();
    expect(() => scanJson(nested(65), { maxDepth: 64 })).toThrow(/nested deeper than 64/);
    expect(() => scanJson(`{"a":${nested(64)}}`, { maxDepth: 64 })).toThrow(/nested deeper than 64/);
  });
});
