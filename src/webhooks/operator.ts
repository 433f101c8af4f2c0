import type { Clock } from '../clock.js';
import { BridgeError } from '../errors.js';
import type { Op, Store } from '../store/index.js';
import { INBOX, QUARANTINE, type InboxEntry, type QuarantineEntry } from './collections.js';
import { parseEventBody, type EventBody } from './event-body.js';
import { eventRecords, identifyEvent, inboxIdOf } from './event-identity.js';
import type { EventSink } from './intake.js';

/**
 * What an operator does by hand (CONTRACT §1 `events …`): release a quarantined delivery, re-emit an
 * event already seen. Both write the inbox entry and the outbox entries in one commit, like intake.
 */
export interface QuarantineSummary {
  id: string;
  event: string;
  reason: 'stale' | 'future';
  /** The delivery's signed timestamp, ISO 8601. */
  signedAt: string;
  receivedAt: string;
  bytes: number;
}

export interface ReleaseResult {
  id: string;
  /** `duplicate`: the event had meanwhile been stored from another delivery; nothing new was emitted. */
  outcome: 'released' | 'duplicate';
  recordIds: string[];
}

export interface ReprocessResult {
  id: string;
  recordIds: string[];
}

export interface EventOperator {
  listQuarantine(): QuarantineSummary[];
  release(id: string): Promise<ReleaseResult>;
  reprocess(id: string): Promise<ReprocessResult>;
}

export interface OperatorOptions {
  store: Pick<Store, 'get' | 'has' | 'entries' | 'commit'>;
  sink: EventSink;
  clock: Clock;
  /** For the not-found message: how long the inbox keeps events. */
  retentionHours: number;
}

export function createEventOperator(options: OperatorOptions): EventOperator {
  const { store, sink, clock } = options;

  const commitAndNotify = async (ops: Op[]) => {
    await store.commit(ops);
    sink.notify();
  };

  return {
    listQuarantine() {
      return [...store.entries<QuarantineEntry>(QUARANTINE)]
        .map(([, entry]) => summarize(entry))
        .sort((a, b) => a.receivedAt.localeCompare(b.receivedAt) || a.id.localeCompare(b.id));
    },

    async release(name) {
      const held = store.get<QuarantineEntry>(QUARANTINE, inboxIdOf(name));
      if (!held) throw new BridgeError('webhooks.not_found', `no quarantined delivery ${name} (see \`events quarantine list\`)`);
      const body = bodyOf(held.body, held.id);
      const identity = identifyEvent(body);
      const release: Op = { op: 'del', c: QUARANTINE, k: held.id };
      if (store.has(INBOX, identity.id)) {
        await store.commit([release]);
        return { id: identity.id, outcome: 'duplicate', recordIds: [] };
      }
      const now = clock.now();
      const records = eventRecords(body, identity, new Date(now).toISOString());
      const entry: InboxEntry = {
        id: identity.id, event: body.event, receivedAt: new Date(now).toISOString(), receivedAtMs: now,
        body: held.body, recordIds: records.map((r) => r.id), reprocessed: 0,
      };
      await commitAndNotify([{ op: 'put', c: INBOX, k: identity.id, v: entry }, release, ...sink.enqueueOps(records)]);
      return { id: identity.id, outcome: 'released', recordIds: entry.recordIds };
    },

    async reprocess(name) {
      const seen = store.get<InboxEntry>(INBOX, inboxIdOf(name));
      if (!seen) {
        throw new BridgeError(
          'webhooks.not_found',
          `no stored event ${name}: events are kept ${options.retentionHours} h (webhooks.dedupeRetentionHours); use an id like invoice.created:123:0a1b2c3d4e5f`,
        );
      }
      const body = bodyOf(seen.body, seen.id);
      const reprocessed = seen.reprocessed + 1;
      // A new suffix per re-emission: connectors skip ids they have applied, so the same ids would do nothing.
      const records = eventRecords(body, identifyEvent(body), new Date(clock.now()).toISOString(), `:r${reprocessed}`);
      const entry: InboxEntry = { ...seen, reprocessed, recordIds: [...seen.recordIds, ...records.map((r) => r.id)] };
      await commitAndNotify([{ op: 'put', c: INBOX, k: seen.id, v: entry }, ...sink.enqueueOps(records)]);
      return { id: seen.id, recordIds: records.map((r) => r.id) };
    },
  };
}

function summarize(entry: QuarantineEntry): QuarantineSummary {
  const signedMs = entry.timestamp > 1e11 ? entry.timestamp : entry.timestamp * 1000;
  const signed = new Date(signedMs);
  return {
    id: entry.id, event: entry.event, reason: entry.reason,
    signedAt: Number.isNaN(signed.getTime()) ? String(entry.timestamp) : signed.toISOString(),
    receivedAt: entry.receivedAt, bytes: Buffer.byteLength(entry.body),
  };
}

/** Stored bodies were parsed before they were stored; failing now means the store was edited by hand. */
function bodyOf(text: string, id: string): EventBody {
  const parsed = parseEventBody(Buffer.from(text, 'utf8'));
  if (!parsed.ok) throw new BridgeError('webhooks.corrupt', `the stored body of ${id} is unreadable: ${parsed.reason}`);
  return parsed.body;
}
