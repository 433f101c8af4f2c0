import { describe, expect, it } from 'vitest';
import { configSchema } from '../config/index.js';
import { BridgeError } from '../errors.js';
import { checkStoreDir, explainFsError, keyOfPath } from './explain.js';

const config = configSchema.parse({
  store: { dir: '/data' },
  connectors: [
    { name: 'files', type: 'file', streams: ['students'], dir: '/data/out' },
    { name: 'books', type: 'accounting', url: 'https://books.example', secret: 's', ledgerDir: '/srv/ledger' },
  ],
});
const refused = (code: string, path: string) => Object.assign(new Error(`${code}: denied, open '${path}'`), { code, path });

describe('a refused file system call names the config key that set the path', () => {
  it.each([
    ['/data/schoolbridge.lock', 'store.dir'],
    ['/data', 'store.dir'],
    ['/data/out/students.jsonl', 'connectors[0].dir'],
    ['/data/out', 'connectors[0].dir'],
    ['/srv/ledger/ledger-2026-11-22.csv', 'connectors[1].ledgerDir'],
    ['/srv', 'connectors[1].ledgerDir'],
    ['/etc/passwd', undefined],
  ])('%s → %s', (path, key) => {
    expect(keyOfPath(config, path)).toBe(key);
  });

  it('EACCES, EPERM and EROFS become config errors with the fix; others stay as they are', () => {
    const explained = explainFsError(refused('EACCES', '/data/out'), config);
    expect(explained).toBeInstanceOf(BridgeError);
    expect((explained as BridgeError).code).toBe('fs.not_writable');
    expect((explained as BridgeError).message).toMatch(/^connectors\[0\]\.dir: cannot write to \/data\/out: permission denied.*; make it writable for this user, or set connectors\[0\]\.dir to a directory that is$/);
    expect((explainFsError(refused('EROFS', '/data'), config) as BridgeError).message).toMatch(/^store\.dir: cannot write to \/data: the file system is read-only/);
    const other = refused('ENOSPC', '/data');
    expect(explainFsError(other, config)).toBe(other);
    const elsewhere = refused('EACCES', '/etc/passwd');
    expect(explainFsError(elsewhere, config)).toBe(elsewhere);
  });

  it('a directory whose path a file takes names the key; an EEXIST of anything but mkdir stays as it is', () => {
    const taken = explainFsError(Object.assign(refused('EEXIST', '/data'), { syscall: 'mkdir' }), config) as BridgeError;
    expect(taken.code).toBe('fs.not_a_directory');
    expect(taken.message).toBe('store.dir: cannot make the directory /data: it exists and is not a directory; set store.dir to a directory');
    expect((explainFsError(Object.assign(refused('ENOTDIR', '/data/out'), { syscall: 'mkdir' }), config) as BridgeError).message)
      .toBe('connectors[0].dir: cannot make the directory /data/out: a part of its path is a file; set connectors[0].dir to a directory');
    // A lock file made with O_EXCL that is there already is another matter (store/sqlite/lock.ts).
    const lock = Object.assign(refused('EEXIST', '/data/schoolbridge.lock'), { syscall: 'open' });
    expect(explainFsError(lock, config)).toBe(lock);
  });
});

describe('checkStoreDir', () => {
  it('names store.dir for a directory that cannot be made in a virtual file system, as root or not', async () => {
    const dir = `/proc/schoolbridge-test-${process.pid}`;
    // As root, /proc may be written to and still takes no directory; as another user it may not be written.
    await expect(checkStoreDir(configSchema.parse({ store: { dir } }))).rejects.toThrow(
      new RegExp(`^store\\.dir: cannot (make the directory ${dir}: /proc takes no new directories \\(a virtual file system\\?\\); set store\\.dir to a directory on a disk|write to /proc)`),
    );
  });
});
