import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BridgeError } from '../../errors.js';
import { ListScanner, MAX_DEPTH, MAX_VALUE_BYTES } from './scanner.js';
import { thrown as failure } from '../../../test/support/errors.js';

const encoder = new TextEncoder();

/** Feeds `text` to a scanner in pieces cut at `cuts` (byte offsets), returns all elements. */
function scan(text: string, cuts: number[] = [], path = ['data', 'students']): unknown[] {
  const bytes = encoder.encode(text);
  const scanner = new ListScanner(path);
  const points = [...new Set(cuts.filter((c) => c > 0 && c < bytes.length))].sort((a, b) => a - b);
  const out: unknown[] = [];
  let from = 0;
  for (const to of [...points, bytes.length]) {
    out.push(...scanner.push(bytes.subarray(from, to)));
    from = to;
  }
  scanner.end();
  return out;
}

describe('ListScanner', () => {
  it.each([
    ['plain', '{"data":{"students":[{"id":1},{"id":2}]}}', [{ id: 1 }, { id: 2 }]],
    ['whitespace everywhere', ' {\n "data" : { "students" : [ {"id":1} , {"id":2} ] } }\n', [{ id: 1 }, { id: 2 }]],
    ['empty list', '{"data":{"students":[]}}', []],
    ['keys beside the path', '{"meta":{"a":[1,{"b":"]}"}]},"data":{"x":"[","students":[{"id":1}],"y":null},"z":3}', [{ id: 1 }]],
    ['escaped quotes and brackets in strings', '{"data":{"students":[{"s":"a\\"]},{\\\\"}]}}', [{ s: 'a"]},{\\' }]],
    ['multi-byte text', '{"data":{"students":[{"n":"Zażółć gęślą jaźń ✓"}]}}', [{ n: 'Zażółć gęślą jaźń ✓' }]],
    ['primitive elements', '{"data":{"students":[1,"two",null,true]}}', [1, 'two', null, true]],
    ['escaped key', '{"d\\u0061ta":{"students":[{"id":1}]}}', [{ id: 1 }]],
  ])('%s', (_name, text, expected) => {
    expect(scan(text)).toEqual(expected);
    // Byte-by-byte feeding must give the same answer as one chunk.
    expect(scan(text, Array.from({ length: text.length * 4 }, (_, i) => i))).toEqual(expected);
  });

  it.each([
    ['not JSON', 'not json at all', 'upstream.invalid_json'],
    ['html error page', '<html><body>Bad gateway</body></html>', 'upstream.invalid_json'],
    ['truncated in an element', '{"data":{"students":[{"id":1},{"id"', 'upstream.invalid_json'],
    ['truncated after the array', '{"data":{"students":[{"id":1}]', 'upstream.invalid_json'],
    ['empty body', '', 'upstream.invalid_json'],
    ['bad element', '{"data":{"students":[{"id":1},{id:2}]}}', 'upstream.invalid_json'],
    ['bad value beside the path', '{"data":{"other":[1,,2],"students":[]}}', 'upstream.invalid_json'],
    ['missing comma', '{"data":{"students":[{"id":1} {"id":2}]}}', 'upstream.invalid_json'],
    ['trailing garbage', '{"data":{"students":[]}} x', 'upstream.invalid_json'],
    ['two bodies', '{"data":{"students":[]}}{"data":{"students":[]}}', 'upstream.invalid_json'],
    ['trailing comma', '{"data":{"students":[{"id":1},]}}', 'upstream.invalid_json'],
  ])('%s is invalid JSON', (_name, text, code) => {
    expect(failure(() => scan(text)).code).toBe(code);
  });

  it.each([
    ['no data key', '{"students":[]}', 'data', 'object', 'missing'],
    ['data is null', '{"data":null}', 'data', 'object', 'null'],
    ['no students key', '{"data":{"users":[]}}', 'data.students', 'array', 'missing'],
    ['students is an object', '{"data":{"students":{"1":{}}}}', 'data.students', 'array', 'object'],
    ['students is a string', '{"data":{"students":"[]"}}', 'data.students', 'array', 'string'],
    ['body is an array', '[{"id":1}]', '(body)', 'object', 'array'],
    ['body is a number', '42', '(body)', 'object', 'number'],
  ])('%s names the path', (_name, text, path, expected, actual) => {
    const error = failure(() => scan(text));
    expect(error.code).toBe('upstream.invalid_response');
    expect(error.context).toEqual({ path, expected, actual });
  });

  it.each([
    ['a next link at the top', '{"links":{"next":"https://elsewhere/api/v2/students?page=2&token=x"},"data":{"students":[{"id":1}]}}', 'links.next is set'],
    ['a cursor inside data', '{"data":{"students":[{"id":1}],"pagination":{"next_cursor":"abc"}}}', 'data.pagination.next_cursor is set'],
    ['more to come', '{"data":{"has_more":true,"students":[{"id":1}]}}', 'data.has_more: true'],
    ['a second page', '{"meta":{"current_page":1,"last_page":2},"data":{"students":[{"id":1}]}}', 'meta.last_page: 2'],
    ['a total above the list', '{"data":{"students":[{"id":1},{"id":2}]},"meta":{"total":3}}', 'meta.total: 3, where the list holds 2'],
    ['a count above the list', '{"data":{"count":3,"students":[{"id":1},{"id":2}]}}', 'data.count: 3, where the list holds 2'],
    ['a total as text', '{"data":{"total":"3","students":[{"id":1},{"id":2}]}}', 'data.total: 3, where the list holds 2'],
    ['a full page', '{"data":{"page":1,"per_page":2,"students":[{"id":1},{"id":2}]}}', 'data.per_page: 2, and the list holds as many'],
    ['a later page', '{"data":{"page":"2","students":[{"id":1}]}}', 'data.page: 2, not the first page'],
    ['an offset', '{"data":{"students":[{"id":1}]},"meta":{"offset":100}}', 'meta.offset: 100, not the list\'s start'],
    ['a link to the page before', '{"data":{"prev_page_url":"https://u/students?page=1","students":[{"id":1}]}}', 'data.prev_page_url is set, not the first page'],
    ['a page before', '{"data":{"previous":2,"students":[{"id":1}]}}', 'data.previous is set, not the first page'],
    ['a full page by its limit', '{"data":{"limit":2,"students":[{"id":1},{"id":2}]}}', 'data.limit: 2, and the list holds as many'],
    ['a count of the stream above the list', '{"data":{"students_count":3,"students":[{"id":1},{"id":2}]}}', 'data.students_count: 3, where the list holds 2'],
    ['a HAL next link', '{"_links":{"self":{"href":"/students"},"next":{"href":"/students?page=2"}},"data":{"students":[{"id":1}]}}', '_links.next is set'],
  ])('refuses a list answered as one page of more: %s', (_name, text, sign) => {
    const error = failure(() => scan(text));
    expect(error.code).toBe('upstream.invalid_response');
    expect(error.context).toEqual({ path: 'data.students', sign });
    expect(error.message).toContain(`(${sign})`);
    expect(error.message).not.toContain('token=x');
  });

  it.each([
    ['beside the list', '{"data":{"students":[{"id":1}]},"error":{"code":"timeout","message":"Result truncated for Jan Kowalski"}}', 'error (code "timeout")'],
    ['inside data, as text', '{"data":{"error":"partial","students":[{"id":1}]}}', 'data.error (code "partial")'],
    ['in place of the list', '{"error":{"code":"timeout","message":"query timed out"}}', 'error (code "timeout")'],
  ])('refuses an answer that reports an error %s, quoting its code, never its message', (_name, text, sign) => {
    const error = failure(() => scan(text));
    expect(error.code).toBe('upstream.invalid_response');
    expect(error.context).toEqual({ path: 'data.students', sign });
    expect(error.message).toContain(`(${sign} is set)`);
    expect(error.message).not.toMatch(/Kowalski|timed out/);
  });

  it.each([
    ['no error', '{"error":null,"errors":[],"data":{"students":[{"id":1}]}}'],
    ['a null next link', '{"links":{"next":null,"prev":null},"data":{"students":[{"id":1}]}}'],
    ['no more', '{"data":{"students":[{"id":1}],"has_more":false,"next":""}}'],
    ['one page', '{"meta":{"last_page":1,"total":1},"data":{"students":[{"id":1}]}}'],
    ['a full page that a total says is all', '{"data":{"per_page":2,"total":2,"count":2,"page":1,"offset":0,"students":[{"id":1},{"id":2}]}}'],
    ['a page larger than the list', '{"data":{"per_page":50,"students":[{"id":1},{"id":2}]}}'],
    ['no page before', '{"data":{"prev":null,"previous_page_url":"","students_count":2,"students":[{"id":1},{"id":2}]}}'],
    ['the same words inside the elements', '{"data":{"students":[{"id":1,"next":"x","total":9,"links":{"next":"y"}}]}}'],
  ])('takes a whole list that speaks of pages: %s', (_name, text) => {
    expect(scan(text)).toEqual(JSON.parse(text).data.students);
  });

  it('refuses a value nested deeper than MAX_DEPTH, in an element or beside the list, before parsing it', () => {
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    expect(scan(`{"data":{"students":[{"id":1,"junk":${deep(MAX_DEPTH - 1)}}]}}`)).toHaveLength(1);
    const element = failure(() => scan(`{"data":{"students":[{"id":1},{"id":2,"junk":${deep(5000)}}]}}`));
    expect(element).toMatchObject({ code: 'upstream.invalid_response', context: { path: 'data.students[1]', depth: 5001 } });
    expect(element.message).toBe(`upstream answered data.students[1] nested 5001 levels deep; API v2's records nest a few levels, and a value deeper than ${MAX_DEPTH} is refused`);
    expect(failure(() => scan(`{"meta":${deep(200_000)},"data":{"students":[]}}`))).toMatchObject({ context: { path: 'meta', depth: 200_000 } });
  });

  it('refuses one value larger than MAX_VALUE_BYTES, whole in one chunk or across many, in an element or beside the list', () => {
    const big = `"${'x'.repeat(MAX_VALUE_BYTES)}"`;
    const text = `{"data":{"students":[{"id":1},{"id":2,"photo":${big}}]}}`;
    for (const cuts of [[], Array.from({ length: 40 }, (_, i) => (i + 1) * 500_000)]) {
      const error = failure(() => scan(text, cuts));
      expect(error).toMatchObject({ code: 'upstream.too_large', retryable: false, context: { path: 'data.students[1]' } });
      expect(error.message).toBe(`upstream answered data.students[1] of more than ${MAX_VALUE_BYTES} bytes; API v2's records are a few kilobytes, and a value this large is refused`);
    }
    expect(failure(() => scan(`{"meta":${big},"data":{"students":[]}}`, [1_000_000]))).toMatchObject({ code: 'upstream.too_large', context: { path: 'meta' } });
    // Just below the bound is a record like any other.
    const photo = 'x'.repeat(MAX_VALUE_BYTES - 1024);
    expect(scan(`{"data":{"students":[{"id":1,"photo":"${photo}"}]}}`, [3_000_000])).toEqual([{ id: 1, photo }]);
  });

  it('rejects invalid UTF-8', () => {
    const scanner = new ListScanner(['data', 'students']);
    const bytes = Uint8Array.from([...encoder.encode('{"data":{"students":[{"n":"'), 0xff, ...encoder.encode('"}]}}')]);
    expect(failure(() => scanner.push(bytes)).code).toBe('upstream.invalid_json');
  });

  it('gives the same elements as JSON.parse however the body is cut', () => {
    fc.assert(
      fc.property(
        fc.array(fc.jsonValue(), { maxLength: 8 }),
        fc.jsonValue(),
        fc.array(fc.nat({ max: 2000 }), { maxLength: 12 }),
        (items, beside, cuts) => {
          const text = JSON.stringify({ before: beside, data: { students: items, after: beside } }, null, 1);
          expect(scan(text, cuts)).toEqual(JSON.parse(text).data.students);
        },
      ),
    );
  });

  it('handles quotes and backslash runs at any chunk boundary', () => {
    const tricky = fc.string({ unit: fc.constantFrom('\\', '"', 'a', ']', '}', '{', '[', ',', 'ż'), maxLength: 12 });
    fc.assert(
      fc.property(fc.array(fc.dictionary(tricky, tricky, { maxKeys: 3 }), { maxLength: 4 }), fc.array(fc.nat({ max: 300 }), { maxLength: 10 }), (items, cuts) => {
        const text = JSON.stringify({ data: { students: items } });
        expect(scan(text, cuts)).toEqual(items);
      }),
    );
  });

  it('never returns a partial list from a cut-off body', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { minLength: 1, maxLength: 6 }), fc.nat(), (items, at) => {
        const text = JSON.stringify({ data: { students: items } });
        const bytes = encoder.encode(text);
        const cut = at % bytes.length; // strictly shorter than the whole body
        const scanner = new ListScanner(['data', 'students']);
        expect(() => {
          scanner.push(bytes.subarray(0, cut));
          scanner.end();
        }).toThrow(BridgeError);
      }),
    );
  });
});

describe('ListScanner known', () => {
  it('skips the elements `known` claims by their raw bytes: not parsed, not returned, only counted', () => {
    const raws: string[] = [];
    const scanner = new ListScanner(['data', 'students'], (raw) => {
      raws.push(Buffer.from(raw).toString());
      return raws.length === 2; // the second element, split across chunks, and not even valid JSON
    });
    const values: unknown[] = [];
    const indexes: number[] = [];
    for (const chunk of ['{"data":{"students":[{"id":1},{"id"', ':2,oops},', '{"id":3}]}}']) {
      values.push(...scanner.push(Buffer.from(chunk)));
      indexes.push(...scanner.indexes);
    }
    scanner.end();
    expect(raws).toEqual(['{"id":1}', '{"id":2,oops}', '{"id":3}']);
    expect(values).toEqual([{ id: 1 }, { id: 3 }]);
    expect(indexes).toEqual([0, 2]); // list positions, the claimed one leaving a gap
    expect(scanner.count).toBe(3);
  });
});

describe('ListScanner chunk memory', () => {
  it('keeps no view of a chunk past push: the caller may overwrite it for the next one', () => {
    const text = JSON.stringify({ data: { students: [{ id: 1, name: 'Łucja "A"' }, { id: 2, tags: [1, { x: 'y' }] }, { id: 3 }] } });
    const bytes = Buffer.from(text);
    for (const size of [1, 3, 7, 16]) {
      const scanner = new ListScanner(['data', 'students']);
      const reused = Buffer.alloc(size);
      const out: unknown[] = [];
      for (let offset = 0; offset < bytes.length; offset += size) {
        const n = bytes.copy(reused, 0, offset, offset + size);
        out.push(...scanner.push(reused.subarray(0, n)));
        reused.fill(0x7b); // what the next chunk's copy would do to a view kept by mistake
      }
      scanner.end();
      expect(out).toEqual(JSON.parse(text).data.students);
    }
  });
});
