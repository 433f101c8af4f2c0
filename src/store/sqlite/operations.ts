import type Database from 'better-sqlite3';
import type { Replica } from '../port.js';
import { enqueue } from './enqueue.js';
import * as history from './history.js';
import * as inbox from './inbox.js';
import { owedCounts } from './log.js';
import * as outbox from './outbox.js';
import * as outboxLookup from './outbox-lookup.js';
import * as people from './people.js';
import * as ranges from './ranges.js';
import * as snapshot from './snapshot.js';
import * as state from './state.js';

/**
 * Everything the database thread does, by name: the SQLite side of each port method, run inside the
 * thread's transaction. `sqlite-store.ts` calls them by these names.
 */
export type Self = Omit<Replica, 'heartbeatAt' | 'url'>;

export function operations(self: Self) {
  return {
    accept: inbox.accept,
    getEvent: inbox.getEvent,
    reprocess: inbox.reprocess,
    quarantine: inbox.quarantine,
    quarantined: inbox.quarantined,
    release: inbox.release,
    prune: inbox.prune,
    searchInbox: inbox.searchWindow,

    enqueue: (db: Database.Database, records: Parameters<typeof enqueue>[1], now: number, patch: Parameters<typeof state.putState>[1]) => {
      const added = enqueue(db, records, now);
      state.putState(db, patch);
      return added;
    },
    claim: (db: Database.Database, request: Parameters<typeof outbox.claim>[2]) => outbox.claim(db, self.id, request),
    settle: (db: Database.Database, settlements: Parameters<typeof outbox.settle>[2]) => outbox.settle(db, self.id, settlements),
    retry: outbox.retry,
    retryDead: outbox.retryDead,
    getDelivery: outbox.getDelivery,
    list: outbox.list,
    listDead: outbox.listDead,
    rowCounts: outbox.rowCounts,
    owedCounts,
    nextRunAt: outbox.nextRunAt,
    sweep: (db: Database.Database, now: number) => outbox.sweep(db, now, self.id),
    lookup: outboxLookup.lookup,
    retrying: outboxLookup.retrying,

    size: snapshot.size,
    version: snapshot.version,
    indexPage: snapshot.indexPage,
    rows: snapshot.rows,
    gone: snapshot.gone,
    scan: snapshot.scan,
    begin: snapshot.begin,
    stageFresh: snapshot.stageFresh,
    stageChanges: snapshot.stageChanges,
    discard: snapshot.discard,
    applyFresh: snapshot.applyFresh,
    applyChanges: snapshot.applyChanges,
    materializeCreated: ranges.materializeCreated,
    createdPending: ranges.createdPending,
    ranges: ranges.ranges,

    recordRun: (db: Database.Database, run: Parameters<typeof history.recordRun>[2], patch: Parameters<typeof state.putState>[1]) => history.recordRun(db, self.id, run, patch),
    runs: history.runs,
    count: (db: Database.Database, entries: Parameters<typeof history.count>[2]) => history.count(db, self.id, entries),
    tallies: history.tallies,
    attempts: history.attempts,
    pruneHistory: history.prune,
    refreshPeople: people.refresh,
    searchPeople: people.search,
    getPeople: people.get,

    getState: state.getState,
    putState: state.putState,
    beat: (db: Database.Database, now: number, url: string | undefined) => state.beat(db, self, now, url),
    live: state.live,
    forgetReplicas: (db: Database.Database, before: number) => state.forget(db, self.id, before),
    leave: (db: Database.Database) => state.leave(db, self.id),
    takeOver: (db: Database.Database) => state.takeOver(db, self.id),
  };
}

export type Operations = ReturnType<typeof operations>;
export type OperationName = keyof Operations;

/**
 * A connector's batch of deliveries, claimed or settled: hundreds of rows read or written. Each gets
 * a transaction of its own, right after the small calls queued with it and in the order they came,
 * so a webhook's commit never shares one and waits behind one batch at most. Unlike a bulk call it
 * does not wait for the WAL's sync first: the connector waits for it.
 */
export const BATCH: ReadonlySet<OperationName> = new Set<OperationName>(['claim', 'settle']);

/**
 * Work that moves many rows. Each gets a transaction of its own, after the small calls queued with
 * it, so a webhook acknowledgement waits behind one chunk of a poll, not behind all of it.
 */
export const BULK: ReadonlySet<OperationName> = new Set<OperationName>([
  'indexPage', 'scan', 'begin', 'stageFresh', 'stageChanges', 'discard', 'applyFresh', 'applyChanges', 'materializeCreated', 'list', 'rowCounts', 'owedCounts',
  // The console's scans and its background upkeep.
  'searchInbox', 'retrying', 'pruneHistory', 'refreshPeople', 'searchPeople',
  // The inbox's upkeep: a chunk of old events at a time.
  'prune',
]);
