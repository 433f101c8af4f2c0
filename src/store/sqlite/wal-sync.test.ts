import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WalSync } from './wal-sync.js';

/** A sync that ends only when the test says so. */
function manualSync() {
  const pending: ((error: NodeJS.ErrnoException | null) => void)[] = [];
  return {
    sync: (_fd: number, done: (error: NodeJS.ErrnoException | null) => void) => void pending.push(done),
    get waiting() {
      return pending.length;
    },
    finish(error: NodeJS.ErrnoException | null = null) {
      pending.shift()!(error);
    },
  };
}

describe('WalSync', () => {
  let dir: string;
  let wal: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sb-walsync-'));
    wal = path.join(dir, 'db-wal');
    writeFileSync(wal, '');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('releases a commit only after a sync begun after it has ended', () => {
    const disk = manualSync();
    const walSync = new WalSync(wal, disk.sync);
    const released: string[] = [];
    walSync.committed(true, () => released.push('a'));
    expect(released).toEqual([]);
    expect(disk.waiting).toBe(1);
    // Committed while that sync runs: it may not be covered by it.
    walSync.committed(true, () => released.push('b'));
    disk.finish();
    expect(released).toEqual(['a']);
    expect(disk.waiting).toBe(1);
    disk.finish();
    expect(released).toEqual(['a', 'b']);
    walSync.close();
  });

  it('holds a transaction that wrote nothing behind the writes before it, and releases it at once when there are none', () => {
    const disk = manualSync();
    const walSync = new WalSync(wal, disk.sync);
    const released: string[] = [];
    walSync.committed(false, () => released.push('read before any write'));
    expect(released).toEqual(['read before any write']);
    walSync.committed(true, () => released.push('write'));
    walSync.committed(false, () => released.push('read after it'));
    expect(released).toEqual(['read before any write']);
    disk.finish();
    expect(released).toEqual(['read before any write', 'write', 'read after it']);
    expect(disk.waiting).toBe(0);
    walSync.committed(false, () => released.push('read, all on disk'));
    expect(released.at(-1)).toBe('read, all on disk');
    walSync.close();
  });

  it('covers every commit made before a sync began with that one sync', () => {
    const disk = manualSync();
    const walSync = new WalSync(wal, disk.sync);
    const released: number[] = [];
    walSync.committed(true, () => released.push(1));
    for (let i = 2; i <= 5; i++) walSync.committed(true, () => released.push(i));
    disk.finish();
    expect(released).toEqual([1]);
    disk.finish();
    expect(released).toEqual([1, 2, 3, 4, 5]);
    expect(disk.waiting).toBe(0);
    walSync.close();
  });

  it('fails what a failed sync held, and releases nothing after it until the WAL is repaired', () => {
    const disk = manualSync();
    let failures = 0;
    const walSync = new WalSync(wal, disk.sync, () => failures++);
    const outcomes: string[] = [];
    const note = (name: string) => (error?: Error) => outcomes.push(`${name} ${error?.message ?? 'ok'}`);
    walSync.committed(true, note('a'));
    walSync.committed(true, note('b'));
    disk.finish(Object.assign(new Error('EIO'), { code: 'EIO' }));
    expect(outcomes).toEqual(['a EIO']);
    expect(failures).toBe(1);
    expect(walSync.needsRepair()).toBe(true);
    expect(walSync.idle()).toBe(false);
    // No sync may vouch for what the failed one left behind: b, and a read after it, wait.
    expect(disk.waiting).toBe(0);
    walSync.committed(false, note('read'));
    walSync.committed(true, note('c'));
    expect(disk.waiting).toBe(0);
    walSync.repaired();
    expect(outcomes).toEqual(['a EIO', 'b ok', 'read ok', 'c ok']);
    expect(walSync.needsRepair()).toBe(false);
    // Syncs as before from then on.
    walSync.committed(true, note('d'));
    expect(disk.waiting).toBe(1);
    disk.finish();
    expect(outcomes.at(-1)).toBe('d ok');
    walSync.close();
  });

  it('fails what it holds when the repair fails, and goes on holding until one succeeds', async () => {
    const disk = manualSync();
    const walSync = new WalSync(wal, disk.sync);
    const outcomes: string[] = [];
    const note = (name: string) => (error?: Error) => outcomes.push(`${name} ${error?.message ?? 'ok'}`);
    walSync.committed(true, note('a'));
    walSync.committed(true, note('b'));
    disk.finish(new Error('EIO'));
    walSync.repairFailed(new Error('still failing'));
    expect(outcomes).toEqual(['a EIO', 'b still failing']);
    await walSync.drained();
    walSync.committed(false, note('read'));
    expect(outcomes).toHaveLength(2);
    expect(walSync.needsRepair()).toBe(true);
    walSync.repaired();
    expect(outcomes.at(-1)).toBe('read ok');
    walSync.close();
  });

  it('is idle only when every commit is on disk and no sync runs', () => {
    const disk = manualSync();
    const walSync = new WalSync(wal, disk.sync);
    expect(walSync.idle()).toBe(true);
    walSync.committed(true, () => {});
    expect(walSync.idle()).toBe(false);
    disk.finish();
    expect(walSync.idle()).toBe(true);
    walSync.close();
  });

  it('drains: resolves once nothing is held', async () => {
    const disk = manualSync();
    const walSync = new WalSync(wal, disk.sync);
    await walSync.drained();
    walSync.committed(true, () => {});
    let drained = false;
    const draining = walSync.drained().then(() => (drained = true));
    await Promise.resolve();
    expect(drained).toBe(false);
    disk.finish();
    await draining;
    expect(drained).toBe(true);
    walSync.close();
  });

  it('syncs the real file with the default sync', async () => {
    const walSync = new WalSync(wal);
    await new Promise<void>((resolve, reject) => walSync.committed(true, (error) => (error ? reject(error) : resolve())));
    walSync.close();
  });
});
