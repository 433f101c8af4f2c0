import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { knownJson } from '../record-json.js';
import { CreatedChange } from './created-change.js';
import { newItem, type DiffContext, type PolledRecord } from './diff.js';
import { CHAIN_LENGTH } from './snapshot.js';

const ctx: DiffContext = { stream: 'users', detectedAt: '2026-11-22T10:00:00.000Z', initial: 'emit' };
const CHAIN = 'abcdefabcdef';

/** A record as the upstream may spell it: JSON.stringify's text, or the same content with every non-ASCII letter escaped. */
const spelled = (record: PolledRecord, escaped: boolean) =>
  escaped ? JSON.stringify(record).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) : JSON.stringify(record);

const record = fc.record({ id: fc.integer({ min: 1, max: 2 ** 31 }), login: fc.string({ unit: 'grapheme' }), extra: fc.jsonValue() }) as fc.Arbitrary<PolledRecord>;

describe('CreatedChange (a first cycle\'s created change, its record kept as text)', () => {
  it('serializes exactly as the plain change of the same record, and its own text reads back to it', () => {
    fc.assert(
      fc.property(record, fc.boolean(), (value, escaped) => {
        const text = spelled(value, escaped);
        const stored = CHAIN + text;
        let parses = 0;
        const parse = () => ((parses += 1), JSON.parse(text) as PolledRecord);
        const plain = newItem(ctx, String(value.id), stored, parse).change!;
        expect(plain).not.toBeInstanceOf(CreatedChange);
        parses = 0;
        const lazy = newItem(ctx, String(value.id), stored, parse, Buffer.from(stored)).change!;
        expect(lazy).toBeInstanceOf(CreatedChange);
        // Its own text (the WAL's and the file connector's) is had without parsing the record...
        const own = knownJson(lazy)!;
        expect(parses).toBe(0);
        expect(own.startsWith('{"id":')).toBe(true);
        expect(own).toBe((lazy as CreatedChange).head() + text + CreatedChange.TAIL);
        // The same content and key order as the plain change's text (only the record's spelling may differ).
        expect(JSON.stringify(JSON.parse(own))).toBe(JSON.stringify(plain));
        // ...and JSON.stringify, which reads it, gives the plain change's text, key order included.
        expect(JSON.stringify(lazy)).toBe(JSON.stringify(plain));
        expect(lazy.record).toEqual(plain.record);
        expect(lazy.id).toBe(`users:${value.id}:${stored.slice(0, CHAIN_LENGTH)}`);
      }),
      { numRuns: 300 },
    );
  });

  it('parses its record once, on first read', () => {
    const change = new CreatedChange('users:7:abcdefabcdef', 'users', 7, ctx.detectedAt, '{"id":7,"login":"żółw"}');
    const first = change.record;
    expect(first).toEqual({ id: 7, login: 'żółw' });
    expect(change.record).toBe(first);
  });
});
