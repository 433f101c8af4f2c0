import type { Clock } from '../../clock.js';
import { createBatcher } from '../batcher.js';
import type { BridgeError } from '../../errors.js';
import type { Replica, Store } from '../port.js';
import type { PgCalls } from './calls.js';
import { enqueue } from './enqueue.js';
import * as history from './history.js';
import * as inbox from './inbox.js';
import * as outbox from './outbox.js';
import { LostClaims } from './lost-claims.js';
import * as outboxLookup from './outbox-lookup.js';
import * as people from './people.js';
import * as ranges from './ranges.js';
import * as state from './state.js';

/**
 * The port's methods on PostgreSQL, each one transaction (calls.ts), but for the snapshot's
 * (snapshot-methods.ts). Webhook events arriving together share one (createBatcher), since a durable
 * commit costs the same for one row or fifty.
 */
export type PortMethods = Pick<Store, 'inbox' | 'outbox' | 'state' | 'history' | 'people' | 'replicas'>;

/** This process among the replicas. */
export type Self = Omit<Replica, 'heartbeatAt' | 'url'>;

export function pgPortMethods(calls: PgCalls, self: Self, clock: Clock, advertised: () => string | undefined): PortMethods {
  const { read, write, lease, statement } = calls;
  const accepts = createBatcher<inbox.Accept, 'stored' | 'duplicate'>({
    run: (batch) => statement((db) => inbox.accepts(db, batch)),
    // Two statements in flight: while one commits, the next batch gathers. More split the same
    // webhooks into more, smaller statements, each costing the server its fixed share (bench:ingest).
    concurrency: 2,
    maxItems: 200,
    isUnavailable: (error) => (error as BridgeError).code === 'store.unavailable',
  });
  const lost = new LostClaims();
  return {
    inbox: {
      accept: (entry, records) => accepts.call({ entry, records }),
      get: (id) => read((db) => inbox.getEvent(db, id)),
      reprocess: (id, expected, recordIds, records) => write((db) => inbox.reprocess(db, id, expected, recordIds, records, clock.now())),
      quarantine: (entry) => write((db) => inbox.quarantine(db, entry)),
      quarantined: () => read((db) => inbox.quarantined(db)),
      release: (id, entry, records) => write((db) => inbox.release(db, id, entry, records)),
      prune: (before, limit) => write((db) => inbox.prune(db, before, limit)),
      search: (texts, limit) => read((db) => inbox.search(db, texts, limit)),
    },
    outbox: {
      enqueue: (records, patch = {}) => write(async (db) => {
        const added = await enqueue(db, records, clock.now());
        await state.putState(db, patch);
        return added;
      }),
      async claim(request) {
        const held = lost.begin(request.connector, request.now);
        try {
          const claimed = await lease((db) => outbox.claim(db, self.id, request, held));
          lost.answered(request.connector, claimed, held !== undefined);
          return claimed;
        } catch (error) {
          lost.failed(request.connector);
          throw error;
        }
      },
      async settle(settlements) {
        const settled = await lease((db) => outbox.settle(db, self.id, settlements));
        lost.settled(settlements);
        return settled;
      },
      retry: (target, now) => write((db) => outbox.retry(db, target, now)),
      retryDead: (chunk, now) => write((db) => outbox.retryDead(db, chunk, now)),
      get: (id) => read((db) => outbox.getDelivery(db, id, clock.now())),
      list: (filter) => read((db) => outbox.list(db, filter, clock.now())),
      listDead: (chunk) => read((db) => outbox.listDead(db, chunk, clock.now())),
      counts: () => read((db) => outbox.counts(db)),
      nextRunAt: (connector) => read((db) => outbox.nextRunAt(db, connector)),
      ranges: () => read((db) => ranges.ranges(db)),
      sweep: (now) => write((db) => outbox.sweep(db, now, self.id)),
      lookup: (query) => read((db) => outboxLookup.lookup(db, query, clock.now())),
      retrying: () => read((db) => outboxLookup.retrying(db)),
    },
    state: {
      get: <T>(key: string) => read(async (db) => (await state.getState(db, key)) as T | undefined),
      put: (patch) => write((db) => state.putState(db, patch)),
    },
    history: {
      recordRun: (run, patch = {}) => write((db) => history.recordRun(db, self.id, run, patch)),
      runs: (query) => read((db) => history.runs(db, query)),
      count: (entries) => write((db) => history.count(db, self.id, entries)),
      tallies: (kind, since) => read((db) => history.tallies(db, kind, since)),
      attempts: (filter) => read((db) => history.attempts(db, filter)),
      prune: (before, limit) => write((db) => history.prune(db, before, limit)),
    },
    people: {
      refresh: (stream, limit) => write((db) => people.refresh(db, stream, limit)),
      search: (query, limit) => read((db) => people.search(db, query, limit)),
      get: (refs) => read((db) => people.get(db, refs)),
    },
    replicas: {
      beat: (now, at) => write((db) => state.beat(db, self, now, at ?? advertised())),
      live: (since) => read((db) => state.live(db, since)),
      forget: (before) => write((db) => state.forget(db, self.id, before)),
    },
  };
}
