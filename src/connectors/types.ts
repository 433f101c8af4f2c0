import type { Dispatcher } from 'undici';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { z } from 'zod';
import type { Clock } from '../clock.js';
import type { BridgeError } from '../errors.js';
import type { StoredRecord } from './stored-record.js';
import type { UserDirectory } from './user-directory.js';

/** What a connector is given for every call. */
export interface ConnectorContext<C = unknown> {
  /** The connector's own validated config block (name, type, streams and its options). */
  config: C;
  /** The HTTP dispatcher to pass to undici's `request`/`fetch` (an Agent in production, MockAgent/loopback in tests). */
  dispatcher: Dispatcher;
  clock: Clock;
  log: Logger;
  /** Aborted when the daemon stops: give up waiting and report `retry`. */
  signal: AbortSignal;
  metrics: Registry;
  /**
   * Per-connector-instance memory that lives as long as the process (e.g. a Sheets id→row cache). A
   * value with a `close()` method is closed when the cache is let go (cache.ts).
   */
  cache: Map<string, unknown>;
  /** The polled users, to name the people a record is about; absent: nobody can be looked up. */
  users?: UserDirectory;
}

/** The outcome of delivering one record. Anything other than `done` keeps the record in the outbox. */
export type DeliveryOutcome =
  /** `httpStatus`: the receiver's answer, when there was one (kept in the record's attempt history). */
  | { status: 'done'; httpStatus?: number }
  /** Worth trying again later (5xx, 408, 429, network, timeouts); `retryAfterMs` from the server if it said. */
  | { status: 'retry'; error: BridgeError; retryAfterMs?: number }
  /** Trying again will not help (other 4xx, a record the target cannot take): dead at once, kept, retryable by hand. */
  | { status: 'dead'; error: BridgeError };

export type CheckResult = { ok: true } | { ok: false; reason: string };

/**
 * A connector is a plain object. It keeps no state of its own but what `ctx.cache` holds;
 * `deliver` must be idempotent by record id (the outbox delivers at least once).
 */
export interface Connector<C extends { name: string; type: string; streams: readonly string[] } = any> {
  type: string;
  /** Validates this type's config block; also used by the main config schema. */
  configSchema: z.ZodType<C>;
  /** Records handed to one `deliver` call at most (default 1). */
  batchSize?(config: C): number;
  /**
   * Batches in flight at most, when the connector cannot use `delivery.concurrency` of them (the
   * smaller of the two applies). Default: no limit of its own.
   */
  maxConcurrency?(config: C): number;
  /**
   * Whether one replica at a time may serve this connector (default: any number at once): its
   * deliveries write local or ordered state, a file or a spreadsheet's rows, that two processes
   * must not write side by side. The outbox holds the connector's role in the store while it
   * delivers to it (docs/store.md); `ctx.cache` starts empty each time this replica takes it.
   */
  exclusive?(config: C): boolean;
  /** Credentials and reachability, shown in /readyz. Must not throw. */
  check(ctx: ConnectorContext<C>): Promise<CheckResult>;
  /** One outcome per record, same order, same length. Throwing counts as `retry` for every record. */
  deliver(ctx: ConnectorContext<C>, records: readonly StoredRecord[]): Promise<DeliveryOutcome[]>;
}
