import { describe, expect, it } from 'vitest';
import { releaseCache } from './cache.js';

describe('releaseCache', () => {
  it('empties the cache at once and closes each value that can be closed, a failing one too', async () => {
    const closed: string[] = [];
    const cache = new Map<string, unknown>([
      ['file', { close: async () => void closed.push('file') }],
      ['plain', { rows: [1, 2] }],
      ['broken', { close: () => Promise.reject(new Error('EIO')) }],
      ['nothing', null],
      ['other', { close: () => void closed.push('other') }],
    ]);
    const released = releaseCache(cache);
    expect(cache.size).toBe(0);
    await released;
    expect(closed.sort()).toEqual(['file', 'other']);
  });
});
