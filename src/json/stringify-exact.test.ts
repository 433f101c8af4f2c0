import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonNumber } from './json-number.js';
import { RawJson } from './raw-json.js';
import { stringifyExact } from './stringify-exact.js';

describe('stringifyExact', () => {
  it('is JSON.stringify for plain values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(stringifyExact(value)).toBe(JSON.stringify(value));
      }),
    );
    const odd = { a: undefined, f: () => 1, d: new Date(0), list: [undefined, Number.NaN, Infinity] };
    expect(stringifyExact(odd)).toBe(JSON.stringify(odd));
    expect(stringifyExact(undefined)).toBe('null');
  });

  it('writes JsonNumber literals and RawJson texts as they are', () => {
    const value = { id: new JsonNumber('9007199254740993'), invoice: new RawJson('{"total":123.4500,"b":1,"a":2}') };
    expect(stringifyExact(value)).toBe('{"id":9007199254740993,"invoice":{"total":123.4500,"b":1,"a":2}}');
  });

  it('lets JSON.stringify fall back to the nearest value rather than to an object', () => {
    expect(JSON.stringify({ id: new JsonNumber('1E2'), raw: new RawJson('{"a":1.50}') })).toBe('{"id":100,"raw":{"a":1.5}}');
  });
});
