import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { parseLine, rawSafe, Wal, walLine, type Op } from './wal.js';

type Form = 'plain' | 'json' | 'raw' | 'rawJson';

/** An op as a caller may hand it to the WAL: plain, with its JSON text, with a raw value, or as raw JSON bytes in parts. */
function prepared(op: Op, form: Form): Op {
  if (op.op !== 'put' || form === 'plain') return op;
  if (form === 'json') return { ...op, json: JSON.stringify(op.v) };
  if (form === 'rawJson') {
    // In three parts cut anywhere, even inside a letter's UTF-8 bytes (the WAL only puts them one after the other).
    const bytes = Buffer.from(JSON.stringify(op.v));
    const a = Math.floor(bytes.length / 3);
    const b = Math.floor((2 * bytes.length) / 3) + 1;
    return { ...op, rawJson: [bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)] };
  }
  const raw = Buffer.from(op.v as string);
  return { ...op, raw };
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
  const form = fc.constantFrom('plain', 'json', 'raw', 'rawJson') as fc.Arbitrary<Form>;

  it('read back give the ops written, whatever form each put came in (raw values with tabs, quotes, any letter)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(op, form), { maxLength: 8 }), (pairs) => {
        // A raw value only where it is allowed; JSON.parse(JSON.stringify(v)) is what a replay can give back.
        const ops = pairs.map(([o, f]) => prepared(o, f === 'raw' && !(o.op === 'put' && typeof o.v === 'string' && rawSafe(o.v)) ? 'json' : f));
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

  it('a value as raw JSON is written as its bytes after the tab, named by its length, and read back parsed', () => {
    const line = lineOf([prepared({ op: 'put', c: 'c', k: 'k', v: { a: 'ż\t"', n: [1, null] } }, 'rawJson'), prepared({ op: 'put', c: 'c', k: 'r', v: 'x' }, 'raw')]);
    expect(line.toString()).toBe('{"s":3,"o":[{"op":"put","c":"c","k":"k","j":27},{"op":"put","c":"c","k":"r","r":1}]}\t{"a":"ż\\t\\"","n":[1,null]}x');
    expect(parseLine(line).o).toEqual([{ op: 'put', c: 'c', k: 'k', v: { a: 'ż\t"', n: [1, null] } }, { op: 'put', c: 'c', k: 'r', v: 'x' }]);
    expect(() => parseLine(line.subarray(0, line.length - 2))).toThrow(/past the end/);
  });

  it('refuses raw values cut short, or bytes left over that no op claims', () => {
    const line = lineOf([prepared({ op: 'put', c: 'c', k: 'k', v: 'żółw' }, 'raw')]);
    expect(() => parseLine(line.subarray(0, line.length - 1))).toThrow(/past the end/);
    expect(() => parseLine(Buffer.concat([line, Buffer.from('x')]))).toThrow(/belong to no op/);
    expect(() => parseLine(Buffer.from('{"s":1,"o":[{"op":"put","c":"c","k":"k","r":-1}]}\t'))).toThrow(/past the end/);
  });
});

/** The zero-fill pieces, log writes through the handle (big batches) and syncs of a Wal, in order. */
async function recordFileCalls(run: (dir: string) => Promise<void>): Promise<string[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'schoolbridge-wal-'));
  const probe = await open(path.join(dir, 'probe'), 'w');
  const proto = Object.getPrototypeOf(probe) as FileHandle;
  await probe.close();
  const originalWrite = proto.write;
  const originalDatasync = proto.datasync;
  const calls: string[] = [];
  vi.spyOn(proto, 'write').mockImplementation(function (this: FileHandle, ...args: unknown[]) {
    const [buffer, , length] = args as [Uint8Array, number, number];
    // A log line is never all zeros.
    calls.push(buffer instanceof Uint8Array && buffer.every((b) => b === 0) ? `zeros ${length}` : 'line');
    return Reflect.apply(originalWrite, this, args) as never;
  });
  vi.spyOn(proto, 'datasync').mockImplementation(function (this: FileHandle) {
    calls.push('sync');
    return Reflect.apply(originalDatasync, this, []) as Promise<void>;
  });
  try {
    await run(dir);
  } finally {
    vi.restoreAllMocks();
    await rm(dir, { recursive: true, force: true });
  }
  return calls;
}

describe('segment preallocation', () => {
  it('a bulk write reaching the zeros being written goes on after their current piece, and starts no new fill', async () => {
    const calls = await recordFileCalls(async (dir) => {
      const wal = new Wal(dir);
      await wal.open(1);
      // A small append starts the fill (16 MB, 64 pieces) right after the first MB; a 2 MB line reaches it at once.
      await wal.append({ seq: 1, ops: [{ op: 'put', c: 'c', k: 'k', v: 1 }] });
      await wal.append({ seq: 2, ops: [{ op: 'put', c: 'c', k: 'big', v: 'x'.repeat(2 * 1024 * 1024) }] });
      await wal.drain();
      await wal.close();
    });
    const line = calls.indexOf('line');
    const pieces = calls.slice(0, line).filter((c) => c.startsWith('zeros')).length;
    expect(pieces).toBeGreaterThan(0);
    expect(pieces).toBeLessThan(64);
    expect(calls.slice(line).filter((c) => c.startsWith('zeros'))).toEqual([]);
  });

  it('zero-fills ahead in pieces, each synced before the next is written: a commit syncing meanwhile flushes one piece at most', async () => {
    const calls = await recordFileCalls(async (dir) => {
      const wal = new Wal(dir);
      await wal.open(1);
      await wal.append({ seq: 1, ops: [{ op: 'put', c: 'c', k: 'k', v: 1 }] });
      await wal.close();
    });
    const zeros = calls.filter((c) => c.startsWith('zeros'));
    expect(zeros.length).toBeGreaterThan(1);
    expect(zeros.every((c) => Number(c.slice('zeros '.length)) <= 256 * 1024)).toBe(true);
    // Never two pieces written without a sync between them, and the last one synced too.
    expect(calls.join(',')).not.toMatch(/zeros \d+,zeros/);
    expect(calls.at(-1)).toBe('sync');
  });
});
