import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { describeError } from '../errors.js';
import { rememberJson } from '../record-json.js';
import type { AnyRecord } from '../records.js';
import { verifySignature } from '../signature/index.js';
import type { Op, Store } from '../store/index.js';
import { INBOX, QUARANTINE, type InboxEntry, type QuarantineEntry } from './collections.js';
import { parseEventBody, type EventBody } from './event-body.js';
import { eventRecordJson, eventRecords, identifyEvent, type EventIdentity } from './event-identity.js';
import type { IntakeMetrics, RejectReason } from './intake-metrics.js';

/** Where stored events go: the outbox (enqueue ops that join our commit, then a wake-up). */
export interface EventSink {
  enqueueOps(records: readonly AnyRecord[]): Op[];
  notify(): void;
}

export type IntakeStore = Pick<Store, 'get' | 'has' | 'commit' | 'durable'>;

export interface IntakeOptions {
  store: IntakeStore;
  sink: EventSink;
  /** Accepted signing secrets, the current one first (upstream.clientSecret, then webhooks.previousSecrets). */
  secrets: readonly string[];
  toleranceSeconds: number;
  clock: Clock;
  log: Logger;
  metrics: IntakeMetrics;
}

export type IntakeAnswer =
  | { status: 200; outcome: 'stored' | 'duplicate'; id: string }
  | { status: 400 | 401 | 503; outcome: 'rejected'; reason: RejectReason; detail?: string };

export interface Intake {
  /** Verifies, deduplicates and stores one delivery; resolves with the answer to give. Never rejects on bad input. */
  receive(signatureHeader: unknown, rawBody: Uint8Array): Promise<IntakeAnswer>;
}

/**
 * The webhook intake (issue 6): verify the raw bytes, deduplicate by the event's identity, write the
 * event and its outbox entries in ONE commit, and only then say 200 (CONTRACT §5: never 200 without
 * durable storage). Concurrent deliveries share fsyncs through the store's group commit.
 */
export function createIntake(options: IntakeOptions): Intake {
  const { store, sink, clock, log, metrics } = options;

  const reject = (status: 400 | 401 | 503, reason: RejectReason, detail?: string): IntakeAnswer => {
    metrics.rejected.inc({ reason });
    return { status, outcome: 'rejected', reason, ...(detail === undefined ? {} : { detail }) };
  };

  /** Answers 200 for an event already in memory only once that earlier write is durable. */
  const duplicate = async (id: string): Promise<IntakeAnswer> => {
    try {
      await store.durable();
    } catch (error) {
      log.error({ err: error, id }, 'webhook duplicate not acknowledged: the store cannot write');
      return reject(503, 'store', describeError(error));
    }
    metrics.duplicates.inc();
    log.debug({ id }, 'webhook duplicate acknowledged');
    return { status: 200, outcome: 'duplicate', id };
  };

  const storeEvent = async (body: EventBody, identity: EventIdentity, text: string): Promise<IntakeAnswer> => {
    const now = clock.now();
    const receivedAt = new Date(now).toISOString();
    const records = eventRecords(body, identity, receivedAt);
    // Serialized once here; the store's WAL and the file connector both use this text.
    const objectJson = JSON.stringify(body.object);
    for (const record of records) rememberJson(record, eventRecordJson(record, objectJson));
    const entry: InboxEntry = {
      id: identity.id, event: body.event, receivedAt, receivedAtMs: now,
      body: text, recordIds: records.map((r) => r.id), reprocessed: 0,
    };
    // No await between the dedupe check (in receive) and this commit: the commit applies in memory
    // synchronously, so a concurrent identical delivery already sees the key.
    const ops: Op[] = [{ op: 'put', c: INBOX, k: identity.id, v: entry }];
    // A fresh delivery of an event held in quarantine supersedes it.
    if (store.has(QUARANTINE, identity.id)) ops.push({ op: 'del', c: QUARANTINE, k: identity.id });
    const written = store.commit([...ops, ...sink.enqueueOps(records)]);
    try {
      await written;
    } catch (error) {
      log.error({ err: error, id: identity.id }, 'webhook event not acknowledged: the store cannot write');
      return reject(503, 'store', describeError(error));
    }
    sink.notify();
    metrics.stored.inc();
    log.debug({ id: identity.id, event: body.event }, 'webhook event stored');
    return { status: 200, outcome: 'stored', id: identity.id };
  };

  const quarantine = async (body: EventBody, identity: EventIdentity, text: string, reason: 'stale' | 'future', timestamp: number) => {
    // Already stored (a retry of an event we have) or already held: nothing to keep.
    if (store.has(INBOX, identity.id) || store.has(QUARANTINE, identity.id)) return;
    const entry: QuarantineEntry = {
      id: identity.id, event: body.event, reason, timestamp,
      receivedAt: new Date(clock.now()).toISOString(), body: text,
    };
    try {
      await store.commit([{ op: 'put', c: QUARANTINE, k: identity.id, v: entry }]);
      metrics.quarantined.inc();
      log.warn({ id: identity.id, event: body.event, reason, timestamp }, 'correctly signed delivery outside the time tolerance: quarantined (release with `events quarantine release`)');
    } catch (error) {
      log.error({ err: error, id: identity.id }, 'could not quarantine a stale delivery');
    }
  };

  return {
    async receive(header, raw) {
      metrics.received.inc();
      const verified = verifySignature(options.secrets, header, raw, clock.now(), options.toleranceSeconds);
      if (!verified.ok) {
        // Only a body the signature vouches for is worth parsing (and keeping).
        const parsed = verified.signed ? parseEventBody(raw) : undefined;
        if (parsed?.ok && (verified.reason === 'stale' || verified.reason === 'future')) {
          await quarantine(parsed.body, identifyEvent(parsed.body), parsed.text, verified.reason, verified.timestamp ?? 0);
        }
        log.warn({ reason: verified.reason }, 'webhook delivery rejected: signature');
        return reject(401, verified.reason);
      }
      const parsed = parseEventBody(raw);
      if (!parsed.ok) {
        log.warn({ reason: parsed.reason }, 'webhook delivery rejected: body');
        return reject(400, 'body', parsed.reason);
      }
      const identity = identifyEvent(parsed.body);
      if (store.has(INBOX, identity.id)) return duplicate(identity.id);
      return storeEvent(parsed.body, identity, parsed.text);
    },
  };
}
