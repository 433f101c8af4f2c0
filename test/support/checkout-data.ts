import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * The checkout's `./data`, where a daemon started without a `store.dir` keeps its store and its
 * embedded sandbox's school: `npm start`'s own. The test run must leave it as it found it (a test's
 * daemon there would replace `npm start`'s simulated school, and daemons of two test files would
 * share one store); global-setup.ts compares it before and after the run.
 */
export const CHECKOUT_DATA = path.resolve('data');

/** What a directory holds: each file's path under it, with its size and modification time. Empty if it does not exist. */
export async function listing(dir: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  for (const entry of entries) {
    if (entry.isDirectory()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const info = await stat(file).catch(() => undefined);
    found.set(path.relative(dir, file), info ? `${info.size} bytes, modified ${info.mtime.toISOString()}` : 'gone while listed');
  }
  return found;
}

/** The files added, removed or changed from one listing to the next, each with what happened, in name order. */
export function changes(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] {
  const names = [...new Set([...before.keys(), ...after.keys()])].sort();
  return names.flatMap((name) => {
    const was = before.get(name);
    const is = after.get(name);
    if (was === is) return [];
    if (was === undefined) return [`${name} (added)`];
    if (is === undefined) return [`${name} (removed)`];
    return [`${name} (changed)`];
  });
}
