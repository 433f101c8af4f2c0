import type { Clock } from '../clock.js';
import type { ConnectorContext, DeliveryOutcome } from '../connectors/types.js';
import { BridgeError } from '../errors.js';
import type { AnyRecord } from '../records.js';
import type { ConnectorInstance } from './connector-instance.js';
import type { OutboxEntry } from './entry.js';
import { ReadyHeap } from './ready-heap.js';
import { stillStands, takeReady } from './select.js';
import { checkOutcomes, failAll, lease } from './transitions.js';

/** What a worker needs from its outbox; see outbox.ts. */
export interface WorkerHost {
  clock: Clock;
  leaseMs: number;
  concurrency: number;
  get(id: string): OutboxEntry | undefined;
  record(key: string): AnyRecord | undefined;
  /** Whether the entry is the oldest of its connector and order key. */
  isHead(entry: OutboxEntry): boolean;
  isRunning(): boolean;
  /** While true no batch starts (holdDeliveries); the outbox pumps again on release. */
  isHeld(): boolean;
  /** Puts the leased entries in memory only (a lost lease only means "pending", which it was). */
  stageLeases(entries: OutboxEntry[]): void;
  settle(worker: ConnectorWorker, leased: OutboxEntry[], outcomes: DeliveryOutcome[], startedAt: number): void;
}

/**
 * Delivers one connector's entries: up to `concurrency` batches in flight, each of up to the
 * connector's batch size, heads of their order keys only. Woken by the outbox (notify, a finished
 * batch, the sweep) and by its own timer for the next due retry.
 */
export class ConnectorWorker {
  readonly inFlight = new Set<string>();
  readonly batches = new Set<Promise<void>>();
  private readonly ready = new ReadyHeap();
  private wake: { at: number; abort: AbortController } | undefined;
  readonly batchSize: number;
  /** Batches in flight at most: delivery.concurrency, or less if the connector says so. */
  readonly concurrency: number;

  constructor(
    private readonly host: WorkerHost,
    readonly instance: ConnectorInstance,
    readonly ctx: ConnectorContext,
  ) {
    this.batchSize = Math.max(1, Math.floor(instance.connector.batchSize?.(instance.config) ?? 1));
    const own = instance.connector.maxConcurrency?.(instance.config) ?? Infinity;
    this.concurrency = Math.max(1, Math.floor(Math.min(host.concurrency, own)));
  }

  get name(): string {
    return this.instance.name;
  }

  /**
   * Makes `entry` a candidate: call it whenever an entry becomes pending, changes its runAt, or
   * becomes the head of its key. Extra calls are harmless (stale candidates are dropped).
   */
  schedule(entry: OutboxEntry): void {
    if (entry.status === 'pending') this.ready.push({ id: entry.id, runAt: entry.runAt, seq: entry.seq });
  }

  pump(): void {
    if (!this.host.isRunning() || this.host.isHeld()) return;
    while (this.batches.size < this.concurrency) {
      const { batch, wakeAt } = takeReady(this.ready, this.host.clock.now(), this.batchSize, (candidate) => {
        const entry = this.host.get(candidate.id);
        return stillStands(entry, candidate, entry !== undefined && this.host.isHead(entry), this.inFlight.has(candidate.id)) ? entry : undefined;
      });
      if (batch.length === 0) {
        this.setWake(wakeAt);
        return;
      }
      this.start(batch);
    }
  }

  /** Cancels the retry timer (stop). */
  cancelWake(): void {
    this.wake?.abort.abort();
    this.wake = undefined;
  }

  private start(batch: OutboxEntry[]): void {
    const now = this.host.clock.now();
    const leased = batch.map((entry) => lease(entry, now, this.host.leaseMs));
    for (const entry of leased) this.inFlight.add(entry.id);
    this.host.stageLeases(leased);
    const run = this.run(leased).finally(() => {
      for (const entry of leased) this.inFlight.delete(entry.id);
      this.batches.delete(run);
      this.pump();
    });
    this.batches.add(run);
  }

  private async run(leased: OutboxEntry[]): Promise<void> {
    const startedAt = this.host.clock.now();
    const records = leased.map((entry) => this.host.record(entry.key));
    const present = records.filter((r): r is AnyRecord => r !== undefined);
    const delivered = present.length > 0 ? await this.deliver(present) : [];
    // A missing payload is a store inconsistency, not the connector's business: dead, visible, kept.
    const missing = new BridgeError('outbox.record_missing', 'the record of this delivery is not in the store');
    let next = 0;
    const outcomes = records.map((r): DeliveryOutcome => (r ? delivered[next++]! : { status: 'dead', error: missing }));
    // Out of flight in the same tick as settle, which makes retried entries candidates again: a pump
    // in between would drop them as "in flight" for good.
    for (const entry of leased) this.inFlight.delete(entry.id);
    this.host.settle(this, leased, outcomes, startedAt);
  }

  /** Calls the connector, bounded by the lease: a delivery that outlives it is abandoned and retried. */
  private async deliver(records: AnyRecord[]): Promise<DeliveryOutcome[]> {
    const expiry = new AbortController();
    const signal = AbortSignal.any([this.ctx.signal, expiry.signal]);
    const ctx: ConnectorContext = { ...this.ctx, signal };
    const call = Promise.resolve()
      .then(() => this.instance.connector.deliver(ctx, records))
      .then((outcomes) => checkOutcomes(outcomes, records.length), (error: unknown) => failAll(error, records.length));
    const leaseEnd = this.host.clock.sleep(this.host.leaseMs, expiry.signal).then(() => {
      const error = new BridgeError('outbox.lease_expired', `the delivery took longer than its lease (${this.host.leaseMs} ms)`, { retryable: true });
      expiry.abort(error);
      return failAll(error, records.length);
    }, () => undefined);
    try {
      const first = await Promise.race([call, leaseEnd]);
      return first ?? (await call);
    } finally {
      if (!expiry.signal.aborted) expiry.abort();
    }
  }

  private setWake(at: number | undefined): void {
    if (at === undefined) return;
    if (this.wake && this.wake.at <= at) return;
    this.cancelWake();
    const abort = new AbortController();
    const wake = { at, abort };
    this.wake = wake;
    this.host.clock.sleep(Math.max(0, at - this.host.clock.now()), abort.signal).then(
      () => {
        if (this.wake === wake) this.wake = undefined;
        this.pump();
      },
      () => {},
    );
  }
}

