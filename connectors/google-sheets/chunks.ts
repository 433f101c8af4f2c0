/**
 * Request-size decisions. Google advises about 2 MB per request; we size by the JSON we send.
 * The cell limit is Google's hard 10 million cells per spreadsheet, counted over every tab's grid.
 */
import type { Cell } from './columns.js';

export const MAX_REQUEST_BYTES = 2_000_000;
export const CELL_LIMIT = 10_000_000;
/** Above this share of the limit we re-read the real grid sizes before trusting our estimate. */
export const CELL_WARN_RATIO = 0.9;

/** Splits `items` into runs whose summed `size` stays under `maxBytes` (an item alone may exceed it). */
export function chunkBySize<T>(items: readonly T[], size: (item: T) => number, maxBytes = MAX_REQUEST_BYTES): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const n = size(item);
    if (current.length > 0 && bytes + n > maxBytes) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += n;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** Roster rows → consecutive blocks of at most `chunkCells` cells and about `maxBytes` each. */
export function chunkRows(rows: readonly (readonly Cell[])[], chunkCells: number, maxBytes = MAX_REQUEST_BYTES): { start: number; rows: (readonly Cell[])[] }[] {
  const width = Math.max(1, ...rows.map((r) => r.length));
  const perChunk = Math.max(1, Math.floor(chunkCells / width));
  const blocks: { start: number; rows: (readonly Cell[])[] }[] = [];
  let start = 0;
  while (start < rows.length) {
    const slice = rows.slice(start, start + perChunk);
    const bySize = chunkBySize(slice, (row) => JSON.stringify(row).length + 1, maxBytes)[0] ?? slice;
    blocks.push({ start, rows: bySize });
    start += bySize.length;
  }
  return blocks;
}

export type CellVerdict = 'ok' | 'near' | 'over';

export function cellVerdict(current: number, adding: number, limit = CELL_LIMIT): CellVerdict {
  const total = current + adding;
  if (total > limit) return 'over';
  return total > limit * CELL_WARN_RATIO ? 'near' : 'ok';
}
