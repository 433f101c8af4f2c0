import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseLine, rawPutHeader, rawSafe, walLine, type Op } from './wal.js';

/** An op as a caller may hand it to the WAL: plain, with its JSON text, encoded, or encoded with a raw value. */
function prepared(op: Op, form: 'plain' | 'json' | 'encoded' | 'raw'): Op {
  if (op.op !== 'put' || form === 'plain') return op;
  if (form === 'json') return { ...op, json: JSON.stringify(op.v) };
  if (form === 'encoded') return { ...op, encoded: Buffer.from(JSON.stringify({ op: 'put', c: op.c, k: op.k, v: op.v })) };
  const raw = Buffer.from(op.v as string);
  return { ...op, encoded: Buffer.from(rawPutHeader(op.c, op.k, raw.length)), raw };
}

const lineOf = (ops: Op[]): Buffer => {
  const line = walLine({ seq: 3, ops });
  return Buffer.from(line).subarray(0, -1); // without its newline, as readLines gives it
};

describe('WAL lines', () => {
  const text = fc.string({ unit: fc.constantFrom('a', '"', '\\', '\t', ',', ']', '}', 'ż', '😀', '\n', '\0'), maxLength: 20 });
  const op = fc.oneof(
    fc.record({ op: fc.constant('put' as const), c: fc.constantFrom('a', 'b.c'), k: text, v: text }),
    fc.record({ op: fc.constant('put' as const), c: fc.constant('n'), k: text, v: fc.jsonValue() }),
    fc.record({ op: fc.constant('del' as const), c: fc.constant('a'), k: text }),
  );
  const form = fc.constantFrom('plain', 'json', 'encoded', 'raw') as fc.Arbitrary<'plain' | 'json' | 'encoded' | 'raw'>;

  it('read back give the ops written, whatever form each put came in (raw values with tabs, quotes, any letter)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(op, form), { maxLength: 8 }), (pairs) => {
        // A raw value only where it is allowed; JSON.parse(JSON.stringify(v)) is what a replay can give back.
        const ops = pairs.map(([o, f]) => prepared(o, f === 'raw' && !(o.op === 'put' && typeof o.v === 'string' && rawSafe(o.v)) ? 'encoded' : f));
        const plain = ops.map((o) => (o.op === 'put' ? { op: 'put', c: o.c, k: o.k, v: JSON.parse(JSON.stringify(o.v)) as unknown } : o));
        expect(parseLine(lineOf(ops))).toEqual({ s: 3, o: plain });
      }),
      { numRuns: 300 },
    );
  });

  it('a raw value is written as it is, after a tab that ends the ops', () => {
    const line = lineOf([prepared({ op: 'put', c: 'c', k: 'k', v: 'x{"a":"b"}\ty' }, 'raw'), { op: 'del', c: 'c', k: 'j' }]);
    expect(line.toString()).toBe('{"s":3,"o":[{"op":"put","c":"c","k":"k","r":12},{"op":"del","c":"c","k":"j"}]}\tx{"a":"b"}\ty');
  });

  it('refuses raw values cut short, or bytes left over that no op claims', () => {
    const line = lineOf([prepared({ op: 'put', c: 'c', k: 'k', v: 'żółw' }, 'raw')]);
    expect(() => parseLine(line.subarray(0, line.length - 1))).toThrow(/past the end/);
    expect(() => parseLine(Buffer.concat([line, Buffer.from('x')]))).toThrow(/belong to no op/);
    expect(() => parseLine(Buffer.from('{"s":1,"o":[{"op":"put","c":"c","k":"k","r":-1}]}\t'))).toThrow(/past the end/);
  });
});
