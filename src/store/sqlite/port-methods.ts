import type { Clock } from '../../clock.js';
import { INDEX_PAGE_ROWS, readIndexPages } from '../index-pages.js';
import { LOG_PARTS } from '../log-parts.js';
import type { InboxEntry, Store } from '../port.js';
import type { SearchCursor } from './inbox.js';
import type { CallThread } from './thread-client.js';
import { withOwed } from './with-owed.js';

/**
 * The port's methods on SQLite: each one call of the database thread by name (operations.ts), with
 * the time it needs read from the daemon's clock. Nothing here holds state: the thread does.
 */
export type PortMethods = Pick<Store, 'inbox' | 'outbox' | 'snapshot' | 'state' | 'history' | 'people' | 'replicas'>;

/**
 * Events a call of an inbox search reads at most: a search that finds little reads the whole inbox,
 * days of events, and the webhooks' commits wait behind each call.
 */
export const SEARCH_WINDOW = 5000;

export function sqlitePortMethods(call: CallThread, clock: Clock, advertised: () => string | undefined, searchWindow = SEARCH_WINDOW): PortMethods {
  return {
    inbox: {
      accept: (entry, records) => call('accept', entry, records),
      get: (id) => call('getEvent', id),
      reprocess: (id, expected, recordIds, records) => call('reprocess', id, expected, recordIds, records, clock.now()),
      quarantine: (entry) => call('quarantine', entry),
      quarantined: () => call('quarantined'),
      release: (id, entry, records) => call('release', id, entry, records),
      prune: (before, limit) => call('prune', before, limit),
      // A window of the inbox per call (inbox.ts, searchWindow), until enough are found or none is left.
      search: async (texts, limit) => {
        const wanted = Math.max(0, Math.floor(limit));
        const found: InboxEntry[] = [];
        let before: SearchCursor | undefined;
        do {
          const window = await call('searchInbox', texts, wanted - found.length, before, searchWindow);
          found.push(...window.entries);
          before = window.next;
        } while (before && found.length < wanted);
        return found;
      },
    },
    outbox: {
      enqueue: (records, patch = {}) => call('enqueue', records, clock.now(), patch),
      claim: (request) => call('claim', request),
      settle: (settlements) => call('settle', settlements),
      retry: (target, now) => call('retry', target, now),
      retryDead: (chunk, now) => call('retryDead', chunk, now),
      get: (id) => call('getDelivery', id, clock.now()),
      list: (filter) => call('list', filter, clock.now()),
      listDead: (chunk) => call('listDead', chunk),
      // Each part of the log is counted in a call of its own (log.ts, owedCounts), the rows last: the
      // thread runs them in this order, and a log record only ever becomes a row, so a record that
      // moves between two of these calls is counted twice at worst, never missed.
      counts: async () => {
        const parts = Array.from({ length: LOG_PARTS }, (_, part) => call('owedCounts', part));
        const [rows, ...owed] = await Promise.all([call('rowCounts'), ...parts]);
        return withOwed(rows, owed);
      },
      ranges: () => call('ranges'),
      nextRunAt: (connector) => call('nextRunAt', connector, clock.now()),
      sweep: (now) => call('sweep', now),
      lookup: (query) => call('lookup', query, clock.now()),
      retrying: () => call('retrying'),
    },
    snapshot: {
      size: (stream) => call('size', stream),
      version: (stream) => call('version', stream),
      index: (stream) => readIndexPages((after, limit) => call('indexPage', stream, after, limit), INDEX_PAGE_ROWS),
      rows: (stream, keys) => call('rows', stream, keys),
      gone: (stream, keys) => call('gone', stream, keys),
      scan: (stream, after, limit) => call('scan', stream, after, limit),
      // One process per database file: nobody else stages its streams.
      reserve: async () => {},
      begin: (stream, kind) => call('begin', stream, kind),
      stageFresh: (stream, rows) => call('stageFresh', stream, rows),
      stageChanges: (stream, rows) => call('stageChanges', stream, rows),
      discard: (stream) => call('discard', stream),
      applyFresh: (stream, apply) => call('applyFresh', stream, apply.state, apply.created),
      applyChanges: (stream, apply) => call('applyChanges', stream, apply.limit, apply.connectors, apply.state, apply.now),
      materializeCreated: (stream, limit, now) => call('materializeCreated', stream, limit, now),
      createdPending: (stream) => call('createdPending', stream),
    },
    state: {
      get: async <T>(key: string) => (await call('getState', key)) as T | undefined,
      put: (patch) => call('putState', patch),
    },
    history: {
      recordRun: (run, patch = {}) => call('recordRun', run, patch),
      runs: (query) => call('runs', query),
      count: (entries) => call('count', entries),
      tallies: (kind, since) => call('tallies', kind, since),
      attempts: (filter) => call('attempts', filter),
      prune: (before, limit) => call('pruneHistory', before, limit),
    },
    people: {
      refresh: (stream, limit) => call('refreshPeople', stream, limit),
      search: (query, limit) => call('searchPeople', query, limit),
      get: (refs) => call('getPeople', refs),
    },
    replicas: {
      beat: (now, at) => call('beat', now, at ?? advertised()),
      live: (since) => call('live', since),
      forget: (before) => call('forgetReplicas', before),
    },
  };
}
