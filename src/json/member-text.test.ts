import { describe, expect, it } from 'vitest';
import { memberText } from './member-text.js';

describe('memberText', () => {
  it.each([
    ['{"id":"x","record":{"n":1.50,"s":"}"}}', 'record', '{"n":1.50,"s":"}"}'],
    ['{"record":1,"id":"a","record":[1e2]}', 'record', '[1e2]'],
    ['{ "a" : "x" , "\\u0072ecord" : null }', 'record', 'null'],
    ['{"id":"x"}', 'record', undefined],
    ['[{"record":1}]', 'record', undefined],
  ])('%s → %s', (json, name, expected) => {
    expect(memberText(json, name)).toBe(expected);
  });
});
