import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { shortHash } from './canonical.js';

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
