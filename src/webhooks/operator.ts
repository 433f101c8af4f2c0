import type { Clock } from '../clock.js';
import { BridgeError } from '../errors.js';
import type { InboxEntry, InboxStore, QuarantineEntry } from '../store/index.js';
import { parseEventBody, type EventBody } from './event-body.js';
import { eventRecords, identifyEvent, inboxIdOf, planEventRecords } from './event-identity.js';
import type { EventSink } from './intake.js';

/**
 * What an operator does by hand (`events …`): release a quarantined delivery, re-emit an event
 * already seen. Both write the inbox entry and the outbox records in one transaction, like intake.
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
  listQuarantine(): Promise<QuarantineSummary[]>;
  release(id: string): Promise<ReleaseResult>;
  reprocess(id: string): Promise<ReprocessResult>;
}

export interface OperatorOptions {
  store: InboxStore;
  sink: EventSink;
  clock: Clock;
  /** For the not-found message: how long the inbox keeps events. */
  retentionHours: number;
}

export function createEventOperator(options: OperatorOptions): EventOperator {
  const { store, sink, clock } = options;
  const notFound = (name: string) => new BridgeError('webhooks.not_found', `no quarantined delivery ${name} (see \`events quarantine list\`)`);

  return {
    async listQuarantine() {
      return (await store.quarantined()).map(summarize);
    },

    async release(name) {
      const held = (await store.quarantined()).find((q) => q.id === inboxIdOf(name));
      if (!held) throw notFound(name);
      const body = bodyOf(held.body, held.id);
      const identity = identifyEvent(body);
      const now = clock.now();
      const records = eventRecords(body, identity, new Date(now).toISOString());
      const entry: InboxEntry = {
        id: identity.id, event: body.event, receivedAt: new Date(now).toISOString(), receivedAtMs: now,
        body: body.text, recordIds: records.map((r) => r.id), reprocessed: 0,
      };
      const outcome = await store.release(held.id, entry, planEventRecords(sink, records));
      // Gone meanwhile: a fresh delivery of the event stored it (and dropped the held copy), or another release did.
      if (outcome === 'missing') {
        if (await store.get(identity.id)) return { id: identity.id, outcome: 'duplicate', recordIds: [] };
        throw notFound(name);
      }
      if (outcome === 'duplicate') return { id: identity.id, outcome, recordIds: [] };
      sink.notify();
      return { id: identity.id, outcome, recordIds: entry.recordIds };
    },

    async reprocess(name) {
      const seen = await store.get(inboxIdOf(name));
      if (!seen) {
        throw new BridgeError(
          'webhooks.not_found',
          `no stored event ${name}: events are kept ${options.retentionHours} h (webhooks.dedupeRetentionHours); use an id like invoice.created:123:0a1b2c3d4e5f`,
        );
      }
      const body = bodyOf(seen.body, seen.id);
      // A new suffix per re-emission: connectors skip ids they have applied, so the same ids would do nothing.
      const records = eventRecords(body, identifyEvent(body), new Date(clock.now()).toISOString(), `:r${seen.reprocessed + 1}`);
      const recordIds = [...seen.recordIds, ...records.map((r) => r.id)];
      if (!(await store.reprocess(seen.id, seen.reprocessed, recordIds, planEventRecords(sink, records)))) {
        throw new BridgeError('webhooks.conflict', `${seen.id} was re-emitted by someone else meanwhile; run the command again`, { retryable: true });
      }
      sink.notify();
      return { id: seen.id, recordIds: records.map((r) => r.id) };
    },
  };
}

/** A quarantined delivery as `events quarantine list` shows it. */
export function summarize(entry: QuarantineEntry): QuarantineSummary {
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
