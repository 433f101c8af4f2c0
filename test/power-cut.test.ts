import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { powerCut } from './support/outage.js';
import { tempDir } from './support/temp.js';

/**
 * The power cut the outage tests work out from the disk shim's log: which bytes of a file it zeroes
 * (those a sync that succeeded did not surely cover, and those a failed one left behind), and how
 * many failed syncs it counts.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A file of 40 'x' and the disk log `lines` (with `F` for its path); gives the count and the file after the cut. */
async function cut(lines: string[]): Promise<{ failed: number; text: string }> {
  const dir = await tempDir('schoolbridge-power-cut-');
  cleanups.push(() => dir.cleanup());
  const file = path.join(dir.dir, 'store.db-wal');
  await writeFile(file, 'x'.repeat(40));
  const log = path.join(dir.dir, 'disk.log');
  await writeFile(log, lines.map((line) => `${line.replace(' F', ` ${file}`)}\n`).join(''));
  const failed = await powerCut(log);
  return { failed, text: (await readFile(file, 'latin1')).replaceAll('\0', '.') };
}

describe('the power cut worked out from the disk log', () => {
  it('keeps what was written before a sync that succeeded began', async () => {
    expect(await cut(['W F 0 10', 'B F 1', 'S F ok 1'])).toEqual({ failed: 0, text: 'x'.repeat(40) });
  });

  it('loses what was written since the last sync that succeeded', async () => {
    expect(await cut(['W F 0 10', 'B F 1', 'S F ok 1', 'W F 10 10'])).toEqual({ failed: 0, text: `${'x'.repeat(10)}${'.'.repeat(10)}${'x'.repeat(20)}` });
  });

  it('does not take a write made while a sync ran as covered by it, so a failed sync after loses it', async () => {
    // Another thread's sync began, then a write, then that sync's end: the write may have come too late for it.
    const lines = ['B F 1', 'W F 0 10', 'S F ok 1', 'B F 2', 'S F fail 2'];
    expect(await cut(lines)).toEqual({ failed: 1, text: `${'.'.repeat(10)}${'x'.repeat(30)}` });
  });

  it('loses what a failed sync left behind even after a later sync succeeds, unless it is written again', async () => {
    const lines = ['W F 0 10', 'W F 20 10', 'B F 1', 'S F fail 1', 'W F 20 10', 'B F 2', 'S F ok 2'];
    expect(await cut(lines)).toEqual({ failed: 1, text: `${'.'.repeat(10)}${'x'.repeat(30)}` });
  });

  it('counts a failed sync only when written pages were behind it', async () => {
    expect(await cut(['W F 0 10', 'B F 1', 'S F ok 1', 'B F 2', 'S F fail 2'])).toEqual({ failed: 0, text: 'x'.repeat(40) });
  });

  it('refuses a log whose sync ends without having begun', async () => {
    await expect(cut(['W F 0 10', 'S F ok 7'])).rejects.toThrow(/sync 7 without its beginning/);
  });
});
