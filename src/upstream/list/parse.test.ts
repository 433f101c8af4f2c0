import type { Key } from '../../streams/index.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CHAIN_LENGTH } from '../../store/index.js';
import { testStudent, testUser } from '../../../test/support/poll.js';
import { diffRecords } from '../../poll/diff.js';
import { ListParse, type RawIndex } from './parse.js';

/** A body as the upstream might send it: spaces inside the elements, so raw bytes differ from our texts. */
const body = (list: string, items: readonly unknown[]) =>
  Buffer.from(`{"data": {"${list}": [${items.map((item) => JSON.stringify(item, null, 1)).join(', ')}]}, "status": "ok"}`);

/** Pushes a body in chunks of `size` bytes; returns every batch merged and the end. */
function parseAll(parse: ListParse, bytes: Uint8Array, size = 7) {
  let known = 0;
  const keys: Key[] = [];
  const texts: string[] = [];
  const hashes: string[] = [];
  const rows: { key: Key; entry: string; hash: string }[] = [];
  for (let offset = 0; offset < bytes.length; offset += size) {
    const batch = parse.push(bytes.subarray(offset, offset + size));
    known += batch.known;
    keys.push(...batch.keys);
    texts.push(...batch.texts);
    hashes.push(...batch.hashes);
    const fresh = batch.fresh;
    fresh?.keys.forEach((key, i) => {
      const entry = Buffer.from(fresh.bytes).toString('utf8', i === 0 ? 0 : fresh.ends[i - 1], fresh.ends[i]);
      rows.push({ key, entry, hash: fresh.hashes[i]! });
    });
  }
  return { known, keys, texts, hashes, rows, end: parse.end() };
}

/** The index a stored snapshot of this read would give. */
const indexOf = (parse: ListParse): RawIndex => parse.index();

describe('ListParse', () => {
  it('turns each element into its key, normalized text and raw hash', () => {
    const raw = { ...testUser(2), isArchived: '1', oneTimePassword: 'secret' };
    const out = parseAll(new ListParse('users'), body('users', [testUser(1), raw]));
    expect(out.end).toEqual({ count: 2, deleted: [] });
    expect(out.known).toBe(0);
    const { oneTimePassword: _secret, ...normalized } = { ...raw, isArchived: 1 };
    expect(out.keys).toEqual([1, 2]);
    expect(out.texts).toEqual([JSON.stringify(testUser(1)), JSON.stringify(normalized)]);
    expect(out.hashes.every((h) => /^[A-Za-z0-9+/]{43}=$/.test(h))).toBe(true);
  });

  it('keeps a compact element\'s text as received unless normalization changed it', () => {
    const raw = '{"id":1,"login":"a\\/b","lastName":"\\u0141\u00f3d\u017a","isArchived":0}';
    const flagged = '{"id":2,"login":"c","isArchived":"1"}';
    const out = parseAll(new ListParse('users'), Buffer.from(`{"data":{"users":[${raw},${flagged}]}}`), 5);
    expect(out.texts).toEqual([raw, '{"id":2,"login":"c","isArchived":1}']);
    expect(JSON.parse(out.texts[0]!)).toEqual({ id: 1, login: 'a/b', lastName: 'Łódź', isArchived: 0 });
  });

  it('with a stored index, counts unchanged bytes without parsing, parses the rest, and finds the deletions', () => {
    const first = new ListParse('students');
    parseAll(first, body('students', [testStudent(1), testStudent(2), testStudent(3), testStudent(5)]));
    const second = new ListParse('students', { index: indexOf(first) });
    const out = parseAll(second, body('students', [testStudent(1), testStudent(2, 'Zmiana'), testStudent(3), testStudent(4)]), 100);
    expect(out.known).toBe(2);
    expect(out.keys).toEqual([2, 4]);
    expect(out.end).toEqual({ count: 4, deleted: [5] });
    expect(second.index().keys).toEqual([1, 2, 3, 4]);
  });

  it('reports a key seen twice and hands the second one over to nobody', () => {
    const out = parseAll(new ListParse('users', { fresh: { initial: 'emit' } }), body('users', [testUser(1), testUser(2), testUser(1, 'Again')]));
    expect(out.end).toMatchObject({ count: 3, duplicate: 1 });
    expect(out.rows.map((r) => r.key)).toEqual([1, 2]);
  });

  it('rejects an element that does not fit API v2, naming it, and a body cut short', () => {
    expect(() => parseAll(new ListParse('users'), body('users', [testUser(1), { ...testUser(2), id: '2' }]))).toThrow(
      expect.objectContaining({ code: 'upstream.invalid_response', message: expect.stringContaining('data.users[1].id') }),
    );
    const bytes = body('users', [testUser(1), testUser(2)]);
    expect(() => parseAll(new ListParse('users'), bytes.subarray(0, bytes.length - 30))).toThrow(expect.objectContaining({ code: 'upstream.invalid_json' }));
  });

  it('for an empty snapshot, makes each record\'s row exactly as the diff would', () => {
    // Spaced elements are serialized again; compact ones are kept, and copied, as received.
    const compact = (list: string, items: readonly unknown[]) => Buffer.from(`{"data":{"${list}":[${items.map((item) => JSON.stringify(item)).join(',')}]},"status":"ok"}`);
    for (const [initial, make] of [['emit', body], ['baseline', body], ['emit', compact], ['baseline', compact]] as const) {
      const students = [testStudent(1), testStudent(2, 'Ż"\\'), testStudent(3, 'Łódź 😀')];
      const out = parseAll(new ListParse('students', { fresh: { initial } }), make('students', students), 900);
      const ctx = { stream: 'students' as const, detectedAt: '2026-11-22T10:00:00.000Z', initial };
      const items = diffRecords(ctx, { get: () => undefined, keys: () => [], size: 0 }, students);
      expect(out.rows.map((r) => r.entry)).toEqual(items.map((item) => item.stored));
      expect(out.rows.every((r) => r.entry.length > CHAIN_LENGTH)).toBe(true);
      expect(out.keys).toEqual([]);
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
    let known = 0;
    const keys: Key[] = [];
    const texts: string[] = [];
    let from = 0;
    for (const cut of [...cuts.map((f) => Math.floor(f * bytes.length)).sort((a, b) => a - b), bytes.length]) {
      const batch = parse.push(bytes.subarray(from, Math.max(from, cut)));
      known += batch.known;
      keys.push(...batch.keys);
      texts.push(...batch.texts);
      from = Math.max(from, cut);
    }
    return { known, keys, texts, end: parse.end() };
  }

  it('however the body is cut, each record comes back once, its text reading back to the normalized record', () => {
    fc.assert(
      fc.property(users, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 6 }), fc.boolean(), (list, cuts, spaced) => {
        const bytes = Buffer.from(JSON.stringify({ data: { users: list } }, null, spaced ? 1 : undefined));
        const { known, keys, texts, end } = run(new ListParse('users'), bytes, cuts);
        expect(known).toBe(0);
        expect(end.count).toBe(list.length);
        const normalized = list.map((u) => ({ ...u, isArchived: u.isArchived === '1' ? 1 : u.isArchived === '0' ? 0 : u.isArchived }));
        expect(keys).toEqual(list.map((u) => u.id));
        expect(texts.map((text) => JSON.parse(text))).toEqual(normalized);
      }),
    );
  });

  it('with the index of an earlier read, exactly the records whose bytes changed are parsed, and the missing ones are deletions', () => {
    fc.assert(
      fc.property(users, fc.array(fc.constantFrom('same', 'changed', 'gone'), { maxLength: 20 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 }), (list, fates, cuts) => {
        const first = new ListParse('users');
        run(first, Buffer.from(JSON.stringify({ data: { users: list } })), []);
        const fate = (i: number) => fates[i] ?? 'same';
        const next = list.flatMap((u, i) => (fate(i) === 'gone' ? [] : [fate(i) === 'changed' ? { ...u, lastName: `${u.lastName}*` } : u]));
        const { known, keys, end } = run(new ListParse('users', { index: first.index() }), Buffer.from(JSON.stringify({ data: { users: next } })), cuts);
        expect(keys).toEqual(list.filter((_, i) => fate(i) === 'changed').map((u) => u.id));
        expect(known).toBe(list.filter((_, i) => fate(i) === 'same').length);
        expect(end.deleted).toEqual(list.filter((_, i) => fate(i) === 'gone').map((u) => u.id).sort((a, b) => a - b));
      }),
    );
  });
});
