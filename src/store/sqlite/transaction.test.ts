import type Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { Claimed } from '../port.js';
import { openDatabase } from './handles.js';
import { operations } from './operations.js';
import type { Call } from './protocol.js';
import { migrate } from './schema.js';
import { endClaims, outageRank, runTransaction, syncFailure } from './transaction.js';

/** A transaction of the database thread, and the leases its claims took when its results are not given. */
describe('sqlite transaction', () => {
  const ops = operations({ id: 'me', host: 'h', pid: 1, startedAt: 0 });
  const now = 1_000_000;
  const open = (): Database.Database => {
    const db = openDatabase(':memory:');
    migrate(db);
    return db;
  };
  let next = 1;
  const call = (op: Call['op'], ...args: unknown[]): Call => ({ id: next++, op, args });
  const claim = () => call('claim', { connector: 'files', limit: 10, now, leaseMs: 60_000 });

  it('gives each call its result and says that rows were written', () => {
    const db = open();
    const outcome = runTransaction(db, ops, [call('enqueue', [{ id: 'events:e1', stream: 'events', orderKey: 'events:1', json: '{}', connectors: ['files'] }], now, {})]);
    expect(outcome).toMatchObject({ results: [{ value: 1 }], wrote: true });
  });

  it('ends the leases of claims whose results were not given, so their deliveries are due again', () => {
    const db = open();
    runTransaction(db, ops, [call('enqueue', [{ id: 'events:e1', stream: 'events', orderKey: 'events:1', json: '{}', connectors: ['files'] }], now, {})]);
    const batch = [claim()];
    const first = runTransaction(db, ops, batch);
    if (!('results' in first)) throw new Error('the claim failed');
    expect((first.results[0]!.value as Claimed[]).map((c) => c.delivery.id)).toEqual(['files:events:e1']);
    const again = runTransaction(db, ops, [claim()]);
    expect('results' in again && again.results[0]!.value).toEqual([]);
    endClaims(db, batch, first.results);
    const after = runTransaction(db, ops, [claim()]);
    expect('results' in after && (after.results[0]!.value as Claimed[]).map((c) => c.delivery.id)).toEqual(['files:events:e1']);
  });
});

describe('a failed sync of the WAL file', () => {
  const errno = (code: string | undefined, message: string) => Object.assign(new Error(message), code === undefined ? {} : { code });

  it('says that the disk is full when the sync found no space', () => {
    expect(syncFailure(errno('ENOSPC', 'ENOSPC: no space left on device, fdatasync'))).toEqual({
      code: 'SQLITE_IOERR_FSYNC (ENOSPC)', message: 'the disk is full: ENOSPC: no space left on device, fdatasync',
    });
  });

  it('gives any other error as it came, and EIO when it came without a code', () => {
    expect(syncFailure(errno('EIO', 'EIO: i/o error, fdatasync'))).toEqual({ code: 'SQLITE_IOERR_FSYNC (EIO)', message: 'EIO: i/o error, fdatasync' });
    expect(syncFailure(errno(undefined, 'sync failed'))).toEqual({ code: 'SQLITE_IOERR_FSYNC (EIO)', message: 'sync failed' });
  });

  it('ranks a reason that names a full disk over SQLite\'s bare I/O errors, the thread\'s end over both, a busy WAL under all', () => {
    const full = syncFailure(Object.assign(new Error('ENOSPC: no space left on device, fdatasync'), { code: 'ENOSPC' }));
    const reasons = {
      sqliteFull: 'SQLITE_FULL: database or disk is full',
      syncFull: `${full.code}: ${full.message}`,
      ownFsync: 'SQLITE_IOERR_FSYNC: disk I/O error',
      syncEio: 'SQLITE_IOERR_FSYNC (EIO): EIO: i/o error, fdatasync',
      threadGone: 'the database thread exited (1)',
      busy: 'SQLITE_BUSY: the WAL cannot be copied back whole while a reader holds it',
    };
    expect(Object.fromEntries(Object.entries(reasons).map(([name, reason]) => [name, outageRank(reason)])))
      .toEqual({ sqliteFull: 1, syncFull: 1, ownFsync: 0, syncEio: 0, threadGone: 2, busy: -1 });
  });
});
