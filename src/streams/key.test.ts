import { describe, expect, it } from 'vitest';
import { compareKeys, isKey, parseKey } from './key.js';

describe('keys', () => {
  it('orders integers as numbers and strings by their text, bytewise', () => {
    expect([100, 2, 33, 9, 10].sort(compareKeys)).toEqual([2, 9, 10, 33, 100]);
    expect(['9', '0123', 'b', '10', 'a-1', 'B'].sort(compareKeys)).toEqual(['0123', '10', '9', 'B', 'a-1', 'b']);
  });

  it.each([
    ['integer', 12, true], ['integer', 1.5, false], ['integer', '12', false], ['integer', 2 ** 60, false],
    ['string', 'a', true], ['string', '', false], ['string', 12, false],
  ] as const)('a %s key: %j is one: %s', (type, value, expected) => {
    expect(isKey(type, value)).toBe(expected);
  });

  it('reads a key written as text back in its type', () => {
    expect(parseKey('integer', '123')).toBe(123);
    expect(parseKey('string', '0123')).toBe('0123');
  });
});
