import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { testStudent, testUser } from './testing.js';
import { diffRecords, mapSnapshot } from './diff.js';
import { ListParse } from './list-parse.js';
import { putEntryOp } from './snapshot.js';
import { parseLine, walLine, type Op } from '../store/wal.js';

/** A body as the upstream might send it: spaces inside the elements, so raw bytes differ from our texts. */
const body = (list: string, items: readonly unknown[]) =>
  Buffer.from(`{"data": {"${list}": [${items.map((item) => JSON.stringify(item, null, 1)).join(', ')}]}, "status": "ok"}`);

/** Pushes a body in chunks of `size` bytes; returns every batch merged and the count. */
function parseAll(parse: ListParse, bytes: Uint8Array, size = 7) {
  const known: string[] = [];
  const parsed: string[] = [];
  for (let offset = 0; offset < bytes.length; offset += size) {
    const batch = parse.push(bytes.subarray(offset, offset + size));
    known.push(...batch.known);
    parsed.push(...batch.parsed);
  }
  return { known, parsed, count: parse.end() };
}

describe('ListParse', () => {
  it('turns each element into its key and normalized text, and indexes its raw bytes', () => {
    const raw = { ...testUser(2), isArchived: '1', oneTimePassword: 'secret' };
    const first = new ListParse('users');
    const out = parseAll(first, body('users', [testUser(1), raw]));
    expect(out.count).toBe(2);
    expect(out.known).toEqual([]);
    const { oneTimePassword: _secret, ...normalized } = { ...raw, isArchived: 1 };
    expect(out.parsed).toEqual(['1', JSON.stringify(testUser(1)), '2', JSON.stringify(normalized)]);
    expect([...first.index().values()]).toEqual(['1', '2']);
  });

  it('keeps a compact element\'s text as received unless normalization changed it', () => {
    const raw = '{"id":1,"login":"a\\/b","lastName":"\\u0141\u00f3d\u017a","isArchived":0}';
    const flagged = '{"id":2,"login":"c","isArchived":"1"}';
    const parse = new ListParse('users');
    const out = parseAll(parse, Buffer.from(`{"data":{"users":[${raw},${flagged}]}}`), 5);
    expect(out.parsed).toEqual(['1', raw, '2', '{"id":2,"login":"c","isArchived":1}']);
    expect(JSON.parse(out.parsed[1]!)).toEqual({ id: 1, login: 'a/b', lastName: 'Łódź', isArchived: 0 });
  });

  it('with the previous index, takes unchanged bytes by key without parsing, and parses the rest', () => {
    const first = new ListParse('students');
    parseAll(first, body('students', [testStudent(1), testStudent(2), testStudent(3)]));
    const second = new ListParse('students', { previous: first.index() });
    const out = parseAll(second, body('students', [testStudent(1), testStudent(2, 'Zmiana'), testStudent(3), testStudent(4)]), 100);
    expect(out.known).toEqual(['1', '3']);
    expect(out.parsed.filter((_, i) => i % 2 === 0)).toEqual(['2', '4']);
    expect(out.count).toBe(4);
    expect([...second.index().values()].sort()).toEqual(['1', '2', '3', '4']);
  });

  it('rejects an element that does not fit API v2, naming it, and a body cut short', () => {
    const bad = new ListParse('users');
    expect(() => parseAll(bad, body('users', [testUser(1), { ...testUser(2), id: '2' }]))).toThrow(
      expect.objectContaining({ code: 'upstream.invalid_response', message: expect.stringContaining('data.users[1].id') }),
    );
    const bytes = body('users', [testUser(1), testUser(2)]);
    const cut = new ListParse('users');
    expect(() => parseAll(cut, bytes.subarray(0, bytes.length - 30))).toThrow(expect.objectContaining({ code: 'upstream.invalid_json' }));
  });

  it('for an empty snapshot, makes each record\'s entry and its bytes exactly as the diff would', () => {
    // Spaced elements are serialized again; compact ones are kept, and their raw values copied, as received.
    const compact = (list: string, items: readonly unknown[]) => Buffer.from(`{"data":{"${list}":[${items.map((item) => JSON.stringify(item)).join(',')}]},"status":"ok"}`);
    for (const [initial, make] of [['emit', body], ['baseline', body], ['emit', compact], ['baseline', compact]] as const) {
      const students = [testStudent(1), testStudent(2, 'Ż"\\'), testStudent(3, 'Łódź 😀')];
      const parse = new ListParse('students', { fresh: { initial } });
      const entries: string[] = [];
      const ops: Op[] = [];
      const bytes = make('students', students);
      for (const chunk of [bytes.subarray(0, 900), bytes.subarray(900)]) {
        const batch = parse.push(chunk);
        if (!batch.fresh) continue;
        const { fresh } = batch;
        entries.push(...batch.parsed.filter((_, i) => i % 2 === 1));
        fresh.rawEnds.forEach((end, i) => {
          const raw = fresh.raws.subarray(i === 0 ? 0 : fresh.rawEnds[i - 1], end);
          ops.push(putEntryOp('students', batch.parsed[2 * i]!, batch.parsed[2 * i + 1]!, raw));
        });
      }
      const ctx = { stream: 'students' as const, detectedAt: '2026-11-22T10:00:00.000Z', initial };
      const items = diffRecords(ctx, mapSnapshot(new Map()), students);
      expect(entries).toEqual(items.map((item) => item.stored));
      // Written into a WAL line (with an op of another kind between them) and read back: the diff's ops.
      const line = walLine({ seq: 7, ops: [ops[0]!, { op: 'del', c: 'other', k: 'x' }, ...ops.slice(1)] }) as Buffer;
      const read = parseLine(line.subarray(0, line.length - 1));
      expect(read.s).toBe(7);
      const expectedOps = items.map((item) => putEntryOp('students', item.key, item.stored!));
      expect(read.o).toEqual([expectedOps[0], { op: 'del', c: 'other', k: 'x' }, ...expectedOps.slice(1)]);
    }
  });
});

describe('ListParse (properties)', () => {
  const user = fc.record({
    id: fc.integer({ min: 1, max: 1e6 }),
    lastName: fc.string(),
    isArchived: fc.constantFrom(0, 1, '0', '1', null),
    additionalData: fc.option(fc.record({ id: fc.option(fc.integer({ min: 1, max: 1e6 }), { nil: null }), city: fc.string() }), { nil: null }),
  });
  const users = fc.uniqueArray(user, { selector: (u) => u.id, maxLength: 20 });

  /** All of a body, pushed in chunks cut at the given fractions. */
  function run(parse: ListParse, bytes: Buffer, cuts: number[]) {
    const known: string[] = [];
    const pairs: string[] = [];
    let from = 0;
    for (const cut of [...cuts.map((f) => Math.floor(f * bytes.length)).sort((a, b) => a - b), bytes.length]) {
      const batch = parse.push(bytes.subarray(from, Math.max(from, cut)));
      known.push(...batch.known);
      pairs.push(...batch.parsed);
      from = Math.max(from, cut);
    }
    return { known, pairs, count: parse.end() };
  }

  it('however the body is cut, each record comes back once, its text reading back to the normalized record', () => {
    fc.assert(
      fc.property(users, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }), fc.boolean(), (list, cuts, spaced) => {
        const bytes = Buffer.from(JSON.stringify({ data: { users: list } }, null, spaced ? 1 : undefined));
        const { known, pairs, count } = run(new ListParse('users'), bytes, cuts);
        expect(known).toEqual([]);
        expect(count).toBe(list.length);
        const normalized = list.map((u) => ({ ...u, isArchived: u.isArchived === '1' ? 1 : u.isArchived === '0' ? 0 : u.isArchived }));
        expect(pairs.filter((_, i) => i % 2 === 0)).toEqual(list.map((u) => String(u.id)));
        expect(pairs.filter((_, i) => i % 2 === 1).map((text) => JSON.parse(text))).toEqual(normalized);
      }),
    );
  });

  it('with the index of an earlier read, exactly the records whose bytes changed are parsed', () => {
    fc.assert(
      fc.property(users, fc.array(fc.boolean(), { maxLength: 20 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 }), (list, flips, cuts) => {
        const first = new ListParse('users');
        run(first, Buffer.from(JSON.stringify({ data: { users: list } })), []);
        const next = list.map((u, i) => (flips[i] ? { ...u, lastName: `${u.lastName}*` } : u));
        const { known, pairs } = run(new ListParse('users', { previous: first.index() }), Buffer.from(JSON.stringify({ data: { users: next } })), cuts);
        const changed = next.filter((_, i) => flips[i]).map((u) => String(u.id));
        expect(pairs.filter((_, i) => i % 2 === 0)).toEqual(changed);
        expect(known).toEqual(next.filter((_, i) => !flips[i]).map((u) => String(u.id)));
      }),
    );
  });
});
