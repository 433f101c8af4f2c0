import { closeSync, constants, openSync } from 'node:fs';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/support/temp.js';
import { makeDir } from './make-dir.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function scratch(): Promise<string> {
  const { dir, cleanup } = await tempDir('sb-make-dir-');
  cleanups.push(cleanup);
  return dir;
}

describe('makeDir', () => {
  it('makes a directory with its missing parents, and is content with one that is there', async () => {
    const dir = await scratch();
    const deep = path.join(dir, 'a', 'b', 'c');
    await makeDir(deep);
    expect((await stat(deep)).isDirectory()).toBe(true);
    await makeDir(deep);
    await makeDir(dir);
    await Promise.all([1, 2, 3].map(() => makeDir(path.join(dir, 'x', 'y'))));
    expect((await stat(path.join(dir, 'x', 'y'))).isDirectory()).toBe(true);
  });

  it('refuses a file where a directory should be', async () => {
    const dir = await scratch();
    await writeFile(path.join(dir, 'file'), '');
    await expect(makeDir(path.join(dir, 'file'))).rejects.toMatchObject({ code: 'EEXIST' });
    await expect(makeDir(path.join(dir, 'file', 'sub'))).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('answers ENOENT inside a directory deleted while still open, where Node\'s recursive mkdir never answers', async () => {
    const dir = await scratch();
    const gone = path.join(dir, 'gone');
    await mkdir(gone);
    // Still reachable through its descriptor once deleted, as a removed volume's mount point is.
    const fd = openSync(gone, constants.O_RDONLY | constants.O_DIRECTORY);
    cleanups.push(() => closeSync(fd));
    await rm(gone, { recursive: true });
    await expect(makeDir(`/proc/self/fd/${fd}/out/files`)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
