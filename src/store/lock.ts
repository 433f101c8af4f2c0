import { hostname } from 'node:os';
import { open, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BridgeError } from '../errors.js';

export interface LockInfo {
  pid: number;
  host: string;
  startedAt: string;
  /** Where the holding daemon's admin API answers, once its server listens. */
  adminUrl?: string;
}

const LOCK_FILE = 'LOCK';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function readLock(dir: string): Promise<LockInfo | undefined> {
  try {
    return JSON.parse(await readFile(path.join(dir, LOCK_FILE), 'utf8')) as LockInfo;
  } catch {
    return undefined;
  }
}

/** The lock's holder, if it is a live process other than us (a dead holder's lock is free to take). */
export async function liveHolder(dir: string): Promise<LockInfo | undefined> {
  const info = await readLock(dir);
  if (!info || info.pid === process.pid) return undefined;
  if (info.host !== hostname() || isAlive(info.pid)) return info;
  return undefined;
}

/**
 * One process holds a store at a time (CONTRACT §7). The lock is a file created exclusively; a lock
 * left by a process that no longer runs on this host is taken over. Returns a release function.
 */
export async function acquireLock(dir: string): Promise<{ release(): Promise<void>; update(patch: Partial<LockInfo>): Promise<void> }> {
  const file = path.join(dir, LOCK_FILE);
  let info: LockInfo = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await open(file, 'wx');
      await handle.writeFile(JSON.stringify(info));
      await handle.close();
      return {
        async release() {
          const current = await readLock(dir);
          if (current?.pid === process.pid) await unlink(file).catch(() => {});
        },
        async update(patch) {
          info = { ...info, ...patch };
          await writeFile(file, JSON.stringify(info));
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = await liveHolder(dir);
      if (holder) {
        throw new BridgeError(
          'store.locked',
          `the store ${dir} is held by process ${holder.pid} on ${holder.host} (since ${holder.startedAt}${holder.adminUrl ? `, admin API ${holder.adminUrl}` : ''}); stop it first, or use another store.dir`,
          { context: { holder } },
        );
      }
      await unlink(file).catch(() => {});
    }
  }
  throw new BridgeError('store.locked', `could not take the lock in ${dir}`);
}
