import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import type Database from 'better-sqlite3';
import { BridgeError } from '../../errors.js';
import { openDatabase, pragma } from './handles.js';

/**
 * One process holds an embedded store at a time. The lock is an exclusive SQLite transaction held
 * open on `schoolbridge.lock` for the daemon's life: the kernel drops it with the process however it
 * ends (kill -9, a container re-created under another host name), so a successor takes it at once,
 * and a second process sees it taken. `schoolbridge.holder.json` says who holds it, for messages and
 * for the CLI to reach the daemon's admin API.
 */
export interface LockInfo {
  pid: number;
  host: string;
  startedAt: string;
  /** Where the holding daemon's admin API answers, once its server listens. */
  adminUrl?: string;
  /** Where its embedded sandbox answers, for commands that talk to the upstream beside it. */
  sandboxUrl?: string;
}

export interface HeldLock {
  update(patch: Partial<LockInfo>): Promise<void>;
  release(): void;
}

const LOCK_FILE = 'schoolbridge.lock';
const HOLDER_FILE = 'schoolbridge.holder.json';

function tryLock(dir: string): Database.Database | undefined {
  const db = openDatabase(path.join(dir, LOCK_FILE), { timeout: 0 });
  try {
    pragma(db, 'locking_mode = EXCLUSIVE');
    pragma(db, 'journal_mode = MEMORY');
    db.exec('BEGIN EXCLUSIVE');
    return db;
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY') return undefined;
    throw error;
  }
}

async function readHolder(dir: string): Promise<LockInfo | undefined> {
  try {
    return JSON.parse(await readFile(path.join(dir, HOLDER_FILE), 'utf8')) as LockInfo;
  } catch {
    return undefined;
  }
}

/** Takes the store's lock, or says who holds it (`store.locked`). */
export async function acquireLock(dir: string): Promise<HeldLock> {
  const db = tryLock(dir);
  if (!db) {
    const holder = await readHolder(dir);
    const who = holder ? `process ${holder.pid} on ${holder.host} (since ${holder.startedAt}${holder.adminUrl ? `, admin API ${holder.adminUrl}` : ''})` : 'another process';
    throw new BridgeError('store.locked', `the store ${dir} is held by ${who}; stop it first, or use another store.dir`, { context: { holder } });
  }
  let info: LockInfo = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
  const write = () => writeFile(path.join(dir, HOLDER_FILE), JSON.stringify(info));
  await write();
  return {
    async update(patch) {
      info = { ...info, ...patch };
      await write();
    },
    release() {
      if (db.open) db.close();
    },
  };
}

/**
 * The live holder of the store's lock, when another process (or another store in this one) holds
 * it; undefined when it is free.
 */
export async function liveHolder(dir: string): Promise<LockInfo | undefined> {
  // No lock file, no holder: asking by opening it would leave one behind in a directory a command
  // only looked at (a read-only command's, or one refused as of the old format).
  if (!existsSync(path.join(dir, LOCK_FILE))) return undefined;
  let db: Database.Database | undefined;
  try {
    db = tryLock(dir);
  } catch {
    return undefined; // no store there (yet): nobody holds it
  }
  if (db) {
    db.close();
    return undefined;
  }
  return (await readHolder(dir)) ?? { pid: 0, host: 'unknown', startedAt: 'unknown' };
}

/**
 * Who holds the store, for a message: `the daemon (pid 4242, since …)`, or, when its holder file
 * is gone (removed by hand while it ran), what little is known and how to get the file back.
 */
export function holderName(holder: LockInfo): string {
  if (holder.pid > 0) return `the daemon (pid ${holder.pid}, since ${holder.startedAt})`;
  return `a process that left no ${HOLDER_FILE} (removed while it ran? restarting the daemon writes it again)`;
}
