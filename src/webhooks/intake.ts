import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { describeError } from '../errors.js';
import type { AnyRecord } from '../records.js';
import { parseSignatureHeader, verifySignature } from '../signature/index.js';
import type { Enqueue, InboxEntry, InboxStore, QuarantineEntry, StoreHealth } from '../store/index.js';
import { parseEventBody, type EventBody } from './event-body.js';
import { eventRecords, identifyEvent, planEventRecords, type EventIdentity } from './event-identity.js';
import type { IntakeMetrics, RejectReason } from './intake-metrics.js';
import { createDeadlines } from '../deadlines.js';

/**
 * How long a delivery waits for the store to take its event: one that does not answer at all (a
 * database that froze, a network cut: nothing fails, nothing comes back) would otherwise hold every
 * delivery until the upstream gave up on it. Answered 503, the upstream sends it again; should the
 * commit still come through, that is a duplicate then, answered 200.
 */
export const STORE_ANSWER_MS = 10_000;

/** Where stored events go: the outbox, which says what to enqueue and is woken after the commit. */
export interface EventSink {
  plan(records: readonly AnyRecord[], json?: (record: AnyRecord) => string): Enqueue[];
  notify(): void;
}

export interface IntakeOptions {
  store: Pick<InboxStore, 'accept' | 'quarantine'>;
  /** The store's health: while it cannot write, deliveries are answered 503 at once. */
  health: () => StoreHealth;
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
  /**
   * The answer a delivery gets before its body is read, when its signature header alone decides it
   * (missing or malformed: no body can make it valid), else undefined. Counted and logged as `receive` would.
   */
  screen(signatureHeader: unknown): IntakeAnswer | undefined;
  /** Verifies, deduplicates and stores one delivery; resolves with the answer to give. Never rejects on bad input. */
  receive(signatureHeader: unknown, rawBody: Uint8Array): Promise<IntakeAnswer>;
}

/**
 * The webhook intake (webhooks/README.md): verify the raw bytes, then store the event and its outbox
 * records in ONE transaction, deduplicated by the event's identity, and only then say 200 (never 200
 * without a commit). Deliveries arriving together share a commit (the store's group commit).
 */
export function createIntake(options: IntakeOptions): Intake {
  const { store, sink, clock, log, metrics } = options;
  const answered = createDeadlines(clock, STORE_ANSWER_MS);

  const reject = (status: 400 | 401 | 503, reason: RejectReason, detail?: string): IntakeAnswer => {
    metrics.rejected.inc({ reason });
    return { status, outcome: 'rejected', reason, ...(detail === undefined ? {} : { detail }) };
  };

  const storeEvent = async (body: EventBody, identity: EventIdentity): Promise<IntakeAnswer> => {
    const now = clock.now();
    const receivedAt = new Date(now).toISOString();
    const records = eventRecords(body, identity, receivedAt);
    const entry: InboxEntry = {
      id: identity.id, event: body.event, receivedAt, receivedAtMs: now,
      body: body.text, recordIds: records.map((r) => r.id), reprocessed: 0,
    };
    const planned = planEventRecords(sink, records);
    let outcome: 'stored' | 'duplicate';
    try {
      const accepted = await answered.within(store.accept(entry, planned));
      if (!accepted) {
        log.error({ id: identity.id }, `webhook event not acknowledged: the store has not answered within ${STORE_ANSWER_MS / 1000} s`);
        return reject(503, 'store', `the store has not answered within ${STORE_ANSWER_MS / 1000} s`);
      }
      outcome = accepted.value;
    } catch (error) {
      log.error({ err: error, id: identity.id }, 'webhook event not acknowledged: the store cannot write');
      return reject(503, 'store', describeError(error));
    }
    if (outcome === 'duplicate') {
      metrics.duplicates.inc();
      log.debug({ id: identity.id }, 'webhook duplicate acknowledged');
      return { status: 200, outcome: 'duplicate', id: identity.id };
    }
    sink.notify();
    metrics.stored.inc();
    log.debug({ id: identity.id, event: body.event }, 'webhook event stored');
    return { status: 200, outcome: 'stored', id: identity.id };
  };

  /** Holds a stale delivery for an operator; answers 503 when the store could not keep it, 401 otherwise. */
  const quarantine = async (body: EventBody, identity: EventIdentity, reason: 'stale' | 'future', timestamp: number): Promise<IntakeAnswer> => {
    const entry: QuarantineEntry = {
      id: identity.id, event: body.event, reason, timestamp,
      receivedAt: new Date(clock.now()).toISOString(), body: body.text,
    };
    try {
      // Not kept when the event is stored already (a retry of an event we have) or held already.
      if (await store.quarantine(entry)) {
        metrics.quarantined.inc();
        log.warn({ id: identity.id, event: body.event, reason, timestamp }, 'correctly signed delivery outside the time tolerance: quarantined (release with `events quarantine release`)');
      }
    } catch (error) {
      log.error({ err: error, id: identity.id }, 'could not quarantine a stale delivery');
      return reject(503, 'store', describeError(error));
    }
    log.warn({ reason }, 'webhook delivery rejected: signature');
    return reject(401, reason);
  };

  return {
    screen(header) {
      const parsed = parseSignatureHeader(header);
      if (parsed.ok) return undefined;
      metrics.received.inc();
      log.warn({ reason: parsed.reason }, 'webhook delivery rejected: signature');
      return reject(401, parsed.reason);
    },

    async receive(header, raw) {
      metrics.received.inc();
      const verified = verifySignature(options.secrets, header, raw, clock.now(), options.toleranceSeconds);
      if (!verified.ok) {
        // Only a body the signature vouches for is worth parsing (and keeping).
        const parsed = verified.signed ? parseEventBody(raw) : undefined;
        if (parsed?.ok && (verified.reason === 'stale' || verified.reason === 'future')) {
          // Quarantining is a write: while the store cannot write, the delivery is refused as a fresh one
          // would be, and the upstream's retry (it retries whatever got no 200) is held once it can.
          const health = options.health();
          if (!health.ok) return reject(503, 'store', health.reason);
          return quarantine(parsed.body, identifyEvent(parsed.body), verified.reason, verified.timestamp ?? 0);
        }
        log.warn({ reason: verified.reason }, 'webhook delivery rejected: signature');
        return reject(401, verified.reason);
      }
      const parsed = parseEventBody(raw);
      if (!parsed.ok) {
        log.warn({ reason: parsed.reason }, 'webhook delivery rejected: body');
        return reject(400, 'body', parsed.reason);
      }
      // The store cannot write now (it probes every second): no point waiting for it to say so again.
      const health = options.health();
      if (!health.ok) return reject(503, 'store', health.reason);
      return storeEvent(parsed.body, identifyEvent(parsed.body));
    },
  };
}
