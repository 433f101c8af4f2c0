import { BridgeError } from '../errors.js';
import type { Key, SnapshotIndex } from './port.js';

/**
 * Keys a page of the index holds. On SQLite the database thread reads a page per call, so a webhook's
 * commit waits behind one page, not behind the whole index of a big stream.
 */
export const INDEX_PAGE_ROWS = 10_000;

/** A stream's index read in pages of keys ascending, each page read with the version it saw. */
export type IndexPage = SnapshotIndex;

/**
 * The index of consecutive pages, or undefined when the snapshot changed between two of them (their
 * versions differ): then the caller reads it again from the start.
 */
export function joinIndexPages(pages: readonly IndexPage[]): SnapshotIndex | undefined {
  const version = pages[0]?.version ?? 0;
  if (pages.some((page) => page.version !== version)) return undefined;
  const hashes = pages.map((page) => page.hashes).join('');
  if (pages.every((page) => page.keys instanceof Float64Array)) {
    const keys = new Float64Array(pages.reduce((n, page) => n + page.keys.length, 0));
    let at = 0;
    for (const page of pages) {
      keys.set(page.keys as Float64Array, at);
      at += page.keys.length;
    }
    return { version, keys, hashes };
  }
  return { version, keys: pages.flatMap((page) => [...page.keys] as string[]), hashes };
}

/** The key a page ends with: the next page starts after it. */
export const lastKey = (page: IndexPage): Key | undefined => page.keys[page.keys.length - 1];

/**
 * Reads a whole index a page at a time, each page its own call, again from the start if the snapshot
 * changed meanwhile (`attempts` times at most: a snapshot changing all along is the store's error).
 */
export async function readIndexPages(readPage: (after: Key | undefined, limit: number) => Promise<IndexPage>, pageRows: number, attempts = 3): Promise<SnapshotIndex> {
  for (let attempt = 1; ; attempt++) {
    const pages: IndexPage[] = [];
    for (let after: Key | undefined; ;) {
      const page = await readPage(after, pageRows);
      pages.push(page);
      if (page.keys.length < pageRows) break;
      after = lastKey(page);
    }
    const joined = joinIndexPages(pages);
    if (joined) return joined;
    if (attempt >= attempts) {
      throw new BridgeError('store.changing', `the snapshot changed while its index was read, ${attempts} times: another process applies cycles to it`, { retryable: true });
    }
  }
}
