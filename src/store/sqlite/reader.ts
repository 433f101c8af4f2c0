import path from 'node:path';
import { BridgeError } from '../../errors.js';
import type { InboxStore, OutboxStore, SnapshotStore, StateStore } from '../port.js';
import * as inbox from './inbox.js';
import { openDatabase, pragma, pragmaValue } from './handles.js';
import * as outbox from './outbox.js';
import { ranges } from './ranges.js';
import { SCHEMA_VERSION } from './schema.js';
import * as snapshot from './snapshot.js';
import { DATABASE_FILE } from './sqlite-store.js';
import * as state from './state.js';

/**
 * The embedded store read beside the daemon that holds it, for commands that only look (`deliveries
 * list`, `events quarantine list`, `sync --dry-run`): a read-only connection of its own (WAL lets a
 * reader beside the writer, each statement seeing one committed state). It writes nothing and takes
 * no lock. Leases live in the daemon's memory, so a delivery in flight reads as pending.
 */
export interface StoreReader {
  inbox: Pick<InboxStore, 'quarantined'>;
  outbox: Pick<OutboxStore, 'list' | 'ranges'>;
  /** The whole port's type, so a poll cycle can take it; its writes are refused. */
  snapshot: SnapshotStore;
  state: StateStore;
  close(): void;
}

const refused = (): Promise<never> =>
  Promise.reject(new BridgeError('store.read_only', 'this command only reads the store (a daemon holds it)'));

export function openStoreReader(dir: string): StoreReader {
  const db = openDatabase(path.join(dir, DATABASE_FILE), { readonly: true, fileMustExist: true });
  pragma(db, 'busy_timeout = 5000');
  const version = pragmaValue(db, 'user_version') as number;
  if (version !== SCHEMA_VERSION) {
    db.close();
    throw new BridgeError('store.version', `the store ${dir} has schema version ${version}, this schoolbridge reads ${SCHEMA_VERSION}: run the same version as the daemon`);
  }
  const read = <T>(work: () => T): Promise<T> => {
    try {
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  };
  return {
    inbox: { quarantined: () => read(() => inbox.quarantined(db)) },
    outbox: { list: (filter) => read(() => outbox.list(db, filter, Date.now())), ranges: () => read(() => ranges(db)) },
    snapshot: {
      size: (stream) => read(() => snapshot.size(db, stream)),
      version: (stream) => read(() => snapshot.version(db, stream)),
      index: (stream) => snapshot.index(db, stream),
      rows: (stream, keys) => read(() => snapshot.rows(db, stream, keys)),
      gone: (stream, keys) => read(() => snapshot.gone(db, stream, keys)),
      scan: (stream, after, limit) => read(() => snapshot.scan(db, stream, after, limit)),
      reserve: refused, begin: refused, stageFresh: refused, stageChanges: refused, discard: refused, applyFresh: refused,
      applyChanges: refused, materializeCreated: refused, createdPending: refused,
    },
    state: {
      get: <T>(key: string) => read(() => state.getState(db, key) as T | undefined),
      put: refused,
    },
    close: () => db.close(),
  };
}
