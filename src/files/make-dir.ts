import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * Makes a directory and whatever parents it lacks (`mkdir -p`), and resolves once it is there.
 *
 * Not Node's `mkdir(dir, { recursive: true })`: where a parent exists but can hold nothing new (a
 * directory deleted while still in use, say a volume removed under a running daemon), that one goes
 * back and forth between the child (ENOENT) and the parent (EEXIST) forever, a thread of the pool
 * busy and no answer. Here a child that is still not found once its parent is there is an error.
 */
export async function makeDir(dir: string): Promise<void> {
  try {
    await mkdir(dir);
    return;
  } catch (error) {
    if (await isDirectory(dir, error)) return;
    const parent = path.dirname(dir);
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || parent === dir) throw error;
    await makeDir(parent);
  }
  try {
    await mkdir(dir);
  } catch (error) {
    if (!(await isDirectory(dir, error))) throw error;
  }
}

/** Whether a mkdir failed only because the directory is there already (made meanwhile, perhaps). */
async function isDirectory(dir: string, error: unknown): Promise<boolean> {
  if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return false;
  return (await stat(dir).catch(() => undefined))?.isDirectory() ?? false;
}

/**
 * Whether making a directory failed because a file takes its path: the path itself (mkdir meets
 * EEXIST, as makeDir takes an existing directory as made) or one of its parents (ENOTDIR).
 */
export function takenByFile(error: unknown): boolean {
  const { code, syscall } = (error ?? {}) as { code?: unknown; syscall?: unknown };
  return (code === 'EEXIST' && syscall === 'mkdir') || code === 'ENOTDIR';
}
