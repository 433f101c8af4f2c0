/**
 * Where each of our columns is in a tab, decided from the header row as it is now. Users reorder
 * columns, rename headers and add their own columns; we follow our titles wherever they are, never
 * write into a column whose title is not ours, and add a title we cannot find at the right end.
 */
import { KEY_TITLE, type Cell } from './columns.js';

export type HeaderResolution =
  | {
      ok: true;
      /** Column index of each wanted title, in the order the titles were given. */
      positions: number[];
      /** Header cells to write: missing titles (all of them for an empty header). */
      writes: { col: number; title: string }[];
    }
  | { ok: false; reason: string };

const norm = (value: Cell | undefined) => String(value ?? '').trim().toLowerCase();

export function resolveHeader(header: readonly (Cell | undefined)[], titles: readonly string[]): HeaderResolution {
  const isEmpty = header.every((cell) => norm(cell) === '');
  if (isEmpty) {
    return { ok: true, positions: titles.map((_, i) => i), writes: titles.map((title, col) => ({ col, title })) };
  }
  const firstIndex = new Map<string, number>();
  header.forEach((cell, i) => {
    const key = norm(cell);
    if (key !== '' && !firstIndex.has(key)) firstIndex.set(key, i);
  });
  if (titles.includes(KEY_TITLE) && !firstIndex.has(KEY_TITLE)) {
    // Without the id column every row looks new: appending would duplicate the whole tab.
    return { ok: false, reason: `row 1 has no "${KEY_TITLE}" column; put the title "${KEY_TITLE}" back over the column of ids (or clear row 1 of an empty tab)` };
  }
  let next = header.length;
  const positions: number[] = [];
  const writes: { col: number; title: string }[] = [];
  for (const title of titles) {
    const found = firstIndex.get(title.toLowerCase());
    if (found !== undefined) {
      positions.push(found);
    } else {
      positions.push(next);
      writes.push({ col: next, title });
      next++;
    }
  }
  return { ok: true, positions, writes };
}

/** A full-width row for a write: our cells at their positions, `null` (leave as is) everywhere else. */
export function placeCells(cells: readonly (Cell | null)[], positions: readonly number[]): (Cell | null)[] {
  const width = Math.max(...positions) + 1;
  const row: (Cell | null)[] = new Array<Cell | null>(width).fill(null);
  cells.forEach((cell, i) => {
    row[positions[i]!] = cell;
  });
  return row;
}
