import { describe, expect, it, vi } from 'vitest';
import { diffRecords, mapSnapshot } from '../poll/diff.js';
import { createdChangeJson } from '../records.js';
import { ListParse } from '../upstream/list/parse.js';
import { readList } from '../upstream/list/read.js';
import type { PolledStreamName } from './index.js';

/**
 * A stream whose keys are strings through the pipeline's pure parts: the registry gets `codes`
 * (test/support/codes-stream.ts), keyed by its `code` field. Keys that look like numbers stay text.
 */
// The factory imports codes-stream itself: vi.mock is hoisted above the file's imports, and a module
// those imports load may ask for the registry before a top-level import would be initialized.
vi.mock('./registry.js', async (original) => (await import('../../test/support/codes-stream.js')).withCodes(original));

const CODES = 'codes' as PolledStreamName;
const body = (codes: readonly unknown[]) => Buffer.from(JSON.stringify({ data: { codes: codes.map((code) => ({ code, name: `n${String(code)}` })) } }));

describe('a stream of string keys', () => {
  it('is read with its keys as strings, duplicates and deletions found in key order', () => {
    const first = new ListParse(CODES);
    expect(first.push(body(['b', '0123', '10'])).keys).toEqual(['b', '0123', '10']);
    first.end();
    expect(first.index().keys).toEqual(['0123', '10', 'b']);
    const second = new ListParse(CODES, { index: first.index() });
    const batch = second.push(body(['9', 'b', '9']));
    expect([batch.known, batch.keys]).toEqual([1, ['9']]);
    expect(second.end()).toEqual({ count: 3, deleted: ['0123', '10'], duplicate: '9' });
  });

  it('refuses an element whose key is not a string, naming it', () => {
    expect(() => new ListParse(CODES).push(body(['a', 12]))).toThrow(expect.objectContaining({ code: 'upstream.invalid_response', context: expect.objectContaining({ path: 'data.codes[1].code', expected: 'string' }) }));
  });

  it('makes change records whose key is the string, ids included', async () => {
    const records = await readList(CODES, (async function* () { yield body(['0123', '10']); })());
    const items = diffRecords({ stream: CODES, detectedAt: 'T0' }, mapSnapshot(new Map()), records);
    expect(items.map((item) => [item.change?.key, item.change?.id.split(':').slice(0, 2).join(':')])).toEqual([['0123', 'codes:0123'], ['10', 'codes:10']]);
    const change = items[0]!.change!;
    const json = createdChangeJson({ stream: CODES, key: change.key, chain: change.id.slice(-12), detectedAt: 'T0', text: JSON.stringify(change.record) });
    expect(JSON.parse(json)).toEqual(change);
  });
});
