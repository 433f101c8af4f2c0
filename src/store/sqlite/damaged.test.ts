import { writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/support/temp.js';
import { createSqliteStore, DATABASE_FILE } from './sqlite-store.js';
import { fixFor } from './thread-client.js';

const log = pino({ level: 'silent' });
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a database SQLite cannot use', () => {
  it('names the file and what to do when it is damaged', async () => {
    const { dir, cleanup } = await tempDir('sb-damaged-');
    cleanups.push(cleanup);
    const file = path.join(dir, DATABASE_FILE);
    await writeFile(file, Buffer.alloc(8192, 7));
    const store = createSqliteStore({ dir, log });
    cleanups.push(() => store.stop());
    await expect(store.start()).rejects.toMatchObject({
      code: 'store.failed',
      message: `a store call failed: cannot open ${file}: SQLITE_NOTADB: file is not a database (the file is damaged: stop the daemon and restore a backup as the README says, without the old -wal and -shm files, or move the three files away to start an empty store)`,
    });
  });

  it('names the files to make writable when it may not write, and the user who may not', () => {
    // Root writes a read-only file anyway, so the tests' user cannot meet SQLITE_READONLY for real.
    expect(fixFor('SQLITE_READONLY', '/srv/sb/schoolbridge.db')).toBe(
      ` (/srv/sb/schoolbridge.db, or its -wal or -shm file beside it, may not be written by user ${userInfo().username}: make all three writable)`,
    );
    expect(fixFor('SQLITE_READONLY_DBMOVED', '/srv/sb/schoolbridge.db', true)).toMatch(/^ \(the file, or its -wal or -shm file beside it/);
    expect(fixFor('SQLITE_FULL', '/srv/sb/schoolbridge.db')).toBe('');
  });
});
