import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { joinTexts, splitTexts } from './list-worker-protocol.js';

describe('a batch\'s texts as they cross threads', () => {
  it('come back as the same key, text pairs, whatever the texts (empty, short, long, any characters)', () => {
    const pair = fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 300 }));
    fc.assert(
      fc.property(fc.array(pair, { maxLength: 40 }), (pairs) => {
        const flat = pairs.flat();
        const joined = joinTexts(flat);
        expect(joined.keys).toEqual(pairs.map(([key]) => key));
        expect(joined.text).toBe(pairs.map(([, text]) => text).join(''));
        expect(splitTexts(joined)).toEqual(flat);
      }),
    );
  });
});
