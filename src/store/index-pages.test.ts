import { describe, expect, it } from 'vitest';
import { joinIndexPages, readIndexPages, type IndexPage } from './index-pages.js';
import type { Key } from './port.js';

const page = (version: number, keys: number[]): IndexPage => ({ version, keys: Float64Array.from(keys), hashes: keys.map((k) => `h${k}\n`).join('') });

describe('an index read in pages', () => {
  it('joins pages of one version, integer keys into one Float64Array and string keys into one list', () => {
    expect(joinIndexPages([page(3, [1, 2]), page(3, [5]), page(3, [])])).toEqual({ version: 3, keys: Float64Array.of(1, 2, 5), hashes: 'h1\nh2\nh5\n' });
    expect(joinIndexPages([{ version: 1, keys: ['a', 'b'], hashes: 'x\n\n' }, { version: 1, keys: ['c'], hashes: 'y\n' }]))
      .toEqual({ version: 1, keys: ['a', 'b', 'c'], hashes: 'x\n\ny\n' });
    expect(joinIndexPages([])).toEqual({ version: 0, keys: new Float64Array(0), hashes: '' });
    expect(joinIndexPages([page(3, [1]), page(4, [2])])).toBeUndefined();
  });

  it('reads page after page from the last key, and again from the start when the snapshot changed between two', async () => {
    const rows = [1, 2, 3, 4, 5];
    let version = 7;
    const asked: (Key | undefined)[] = [];
    const readPage = async (after: Key | undefined, limit: number) => {
      asked.push(after);
      const keys = rows.filter((k) => after === undefined || k > (after as number)).slice(0, limit);
      const read = page(version, keys);
      // A cycle commits after the first page of the first read.
      if (asked.length === 1) version = 8;
      return read;
    };
    expect(await readIndexPages(readPage, 2)).toEqual(page(8, rows));
    expect(asked).toEqual([undefined, 2, 4, undefined, 2, 4]);
    // Changing between every first and second page: given up after three reads.
    await expect(readIndexPages(async (after) => (after === undefined ? page(1, [1, 2]) : page(2, [])), 2, 3)).rejects.toMatchObject({ code: 'store.changing', retryable: true, message: expect.stringMatching(/changed while its index was read, 3 times/) });
  });
});
