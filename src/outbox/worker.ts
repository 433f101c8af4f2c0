import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { ConnectorContext, DeliveryOutcome } from '../connectors/types.js';
import { releaseCache } from '../connectors/cache.js';
import { StoredRecord } from '../connectors/stored-record.js';
import { BridgeError, describeError } from '../errors.js';
import { createdChangeBody } from '../records.js';
import type { Claimed, OutboxStore, RoleStore, Settlement } from '../store/index.js';
import { secretValues } from '../config/index.js';
import { LeaseGuard } from './lease-guard.js';
import { maskOutcomes } from './mask-outcomes.js';
import { afterBatch, NO_WAIT, type ReceiverWait } from './receiver-wait.js';
import type { ConnectorInstance } from './connector-instance.js';
import { heldUntil, type IntakeBusy } from './intake-first.js';
import type { RetryPolicy } from './retry-policy.js';
import { ROLE_CHECK_MS, RoleHold } from './role-hold.js';
import { checkOutcomes, failAll, settle, type SettleContext, type Settled } from './transitions.js';

/** What a worker needs from its outbox; see outbox.ts. */
export interface WorkerHost {
  store: OutboxStore;
  roles: RoleStore;
  clock: Clock;
  log: Logger;
  leaseMs: number;
  concurrency: number;
  /**
   * How long a worker whose last claim emptied the queue waits before it claims again: records that
   * arrive meanwhile go out in one batch, whose fixed costs (a claim, a settlement, an fsync) are
   * shared, rather than in many small ones under a steady stream. 0: claim at once.
   */
  lingerMs: number;
  /** The webhook intake, which goes first while it is busy (intake-first.ts); none: never held for it. */
  intake?: IntakeBusy;
  policy: RetryPolicy;
  random: () => number;
  isRunning(): boolean;
  /** While true no batch starts (holdDeliveries); the outbox pumps again on release. */
  isHeld(): boolean;
  /** Whether this replica's leases still stand (Store.leasesStand): no delivery's request starts otherwise. */
  leasesStand(): boolean;
  /** Told the outcomes the store recorded, once they are durable. */
  settled(worker: ConnectorWorker, settled: Settled[], startedAt: number): void;
}

/** How long an idle worker waits before it looks at the store again by itself (work another process added). */
const IDLE_LOOK_MS = 5000;
/** How long a worker waits after the store failed a claim, or a settlement, before it tries again. */
const CLAIM_RETRY_MS = 1000;

/** A failure that may not happen again (BridgeError's `retryable`: the store could not write for now). */
const retryable = (error: unknown): boolean => (error as { retryable?: unknown } | undefined)?.retryable === true;

/**
 * Delivers one connector's deliveries: claims due ones from the store (leased to this replica, the
 * heads of their keys only), hands them to the connector up to `concurrency` batches at a time, and
 * records each outcome. Woken by the outbox (`pump`: something was enqueued, a batch ended) and by
 * its own timer for the next due retry.
 */
export class ConnectorWorker {
  readonly batches = new Set<Promise<void>>();
  /** Batches whose connector call has not ended: what `concurrency` bounds (a batch being settled is not). */
  private delivering = 0;
  readonly batchSize: number;
  /** Batches in flight at most: delivery.concurrency, or less if the connector says so. */
  readonly concurrency: number;
  private claiming: Promise<void> | undefined;
  /** Set when asked to pump while a claim was running: its answer may predate the news. */
  private dirty = false;
  /** The last claim found fewer due deliveries than a batch holds. */
  private drained = false;
  /** The last claim filled a whole batch: more is likely due. */
  private full = false;
  /**
   * Starts the batch claimed ahead, if one waits: claimed while every slot was delivering, it takes
   * the first slot whose connector call ends, so the connector does not wait for a claim between
   * two batches. At most one, and only when the claim before it filled a batch.
   */
  private ahead: (() => void) | undefined;
  private lingering: NodeJS.Timeout | undefined;
  /** Held for the busy intake (intake-first.ts): pumps again when it ends. */
  private yielding: NodeJS.Timeout | undefined;
  /** When the last claim began, on the intake's monotonic scale. */
  private lastClaimAt = -Infinity;
  /** Settlements the store could not take, being sent again (settleLater): no batch starts meanwhile. */
  private unrecorded = 0;
  private wake: { at: number; abort: AbortController } | undefined;
  /** The connector's role, for a connector one replica at a time serves. */
  readonly hold: RoleHold | undefined;
  /** Its credentials, masked in the errors it gives (mask-outcomes.ts). */
  private readonly secrets: ReadonlySet<string>;
  /** What its deliveries' requests go through: none starts once this replica's leases may be another's. */
  private readonly guarded: LeaseGuard;
  /** What its receiver asked of the deliveries to it (a Retry-After): receiver-wait.ts. */
  private receiver: ReceiverWait = NO_WAIT;
  /** The one batch that goes first after a receiver's wait is in flight. */
  private probing = false;

  constructor(
    private readonly host: WorkerHost,
    readonly instance: ConnectorInstance,
    readonly ctx: ConnectorContext,
  ) {
    this.batchSize = Math.max(1, Math.floor(instance.connector.batchSize?.(instance.config) ?? 1));
    const own = instance.connector.maxConcurrency?.(instance.config) ?? Infinity;
    this.concurrency = Math.max(1, Math.floor(Math.min(host.concurrency, own)));
    this.secrets = secretValues(instance.config);
    this.guarded = new LeaseGuard(ctx.dispatcher, () => host.leasesStand());
    if (instance.connector.exclusive?.(instance.config)) {
      // A new term: what the cache knew (ids in a file, rows of a sheet) may have changed meanwhile.
      this.hold = new RoleHold(host.roles, `connector:${instance.name}`, host.clock, () => void releaseCache(ctx.cache));
    }
  }

  /** Whether this replica delivers to the connector now (it may, or it holds the connector's role). */
  async serving(): Promise<boolean> {
    return this.hold ? this.hold.held() : true;
  }

  get name(): string {
    return this.instance.name;
  }

  /** Work in progress: the claim running and the batches in flight. */
  busy(): Promise<void>[] {
    return [...(this.claiming ? [this.claiming] : []), ...this.batches];
  }

  pump(): void {
    if (!this.host.isRunning() || this.host.isHeld()) return;
    // Deliveries pause while the store cannot record what was delivered: a batch delivered now
    // could not be recorded either, and would go out again if its lease ran out meanwhile.
    if (this.unrecorded > 0) return;
    if (this.lingering) return;
    // The receiver asked to wait: nothing starts before then; after it, one batch at a time until one gets through.
    if (this.receiver.until > this.host.clock.now()) {
      this.setWake(this.receiver.until);
      return;
    }
    if (this.receiver.probing && this.probing) return;
    if (this.drained && this.host.lingerMs > 0 && !this.claiming) {
      this.lingering = setTimeout(() => {
        this.lingering = undefined;
        this.drained = false;
        this.pump();
      }, this.host.lingerMs);
      return;
    }
    if (this.claiming) {
      this.dirty = true;
      return;
    }
    if (this.delivering >= this.concurrency && (this.ahead || !this.full)) return;
    // Webhooks are piling up: they go first, and this worker claims at most once a while (intake-first.ts).
    if (this.yielding || this.yieldToIntake()) return;
    this.dirty = false;
    this.claiming = this.claimNext().then((again) => {
      this.claiming = undefined;
      if (again || this.dirty) this.pump();
    });
  }

  /** Whether the busy intake holds the next claim; if so, pumps again when the hold ends. */
  private yieldToIntake(): boolean {
    const intake = this.host.intake;
    if (!intake) return false;
    const now = intake.now();
    const until = heldUntil(now, intake.saturatedAt(), this.lastClaimAt);
    if (until === undefined) {
      this.lastClaimAt = now;
      return false;
    }
    this.yielding = setTimeout(() => {
      this.yielding = undefined;
      this.pump();
    }, Math.ceil(until - now));
    return true;
  }

  /** Until when its receiver asked to wait (epoch ms; past when it did not). */
  receiverWaitsUntil(): number {
    return this.receiver.until;
  }

  /** Cancels the wake-up timers (stop). */
  cancelWake(): void {
    this.cancelOwnWake();
    clearTimeout(this.yielding);
    this.yielding = undefined;
  }

  /** Cancels the worker's own wake-up and its linger; a hold for the intake stands (it pumps when it ends). */
  private cancelOwnWake(): void {
    this.wake?.abort.abort();
    this.wake = undefined;
    clearTimeout(this.lingering);
    this.lingering = undefined;
  }

  /** Claims one batch; resolves with whether to claim again at once. */
  private async claimNext(): Promise<boolean> {
    const { store, clock } = this.host;
    const now = clock.now();
    if (this.hold && !(await this.hold.held())) {
      // Another replica serves this connector: look again later (or when it gives the role up).
      this.setWake(now + ROLE_CHECK_MS);
      return false;
    }
    // A claim made while a batch is in flight says little of the queue: what that batch settles may
    // free a key or the rest of a range (leased until then), and the batch pumps again as it ends.
    // A short or empty answer then neither makes the worker linger nor asks when the next is due.
    const beside = this.batches.size > 0;
    let claimed: Claimed[];
    try {
      claimed = await store.claim({ connector: this.name, limit: this.batchSize, now, leaseMs: this.host.leaseMs });
    } catch (error) {
      this.full = false;
      // A store that cannot be reached says so once, on /readyz and in its own log line; here it would say it every second.
      const level = (error as { code?: string }).code === 'store.unavailable' ? 'debug' : 'warn';
      this.host.log[level]({ connector: this.name, err: describeError(error) }, 'could not claim deliveries; trying again shortly');
      this.setWake(now + CLAIM_RETRY_MS);
      return false;
    }
    this.full = claimed.length >= this.batchSize;
    if (claimed.length > 0) {
      // A hold that began meanwhile sends it back unstarted (runInSlot).
      this.drained = claimed.length < this.batchSize && !beside;
      this.start(claimed);
      return true;
    }
    // Had that batch ended meanwhile, its pump found this claim running and left `dirty` set.
    if (beside) return this.dirty;
    this.drained = true;
    if (this.dirty) return true;
    const next = await store.nextRunAt(this.name).catch(() => undefined);
    this.setWake(Math.min(next ?? Infinity, now + IDLE_LOOK_MS));
    return false;
  }

  /** Gives an unstarted batch back, its attempt not counted; a settlement the store cannot take now is sent again (settleLater). */
  private async handBack(claimed: Claimed[], why: string): Promise<void> {
    const now = this.host.clock.now();
    const error = new BridgeError('outbox.held', why, { retryable: true });
    const context = { now, policy: this.host.policy, random: 0, stopping: true };
    const settlements = claimed.map((c) => settle(c.delivery, { status: 'retry', error }, context).settlement);
    try {
      await this.host.store.settle(settlements);
    } catch (err) {
      await this.settleLater(settlements, claimed, err);
    }
  }

  private start(claimed: Claimed[]): void {
    const probe = this.receiver.probing && !this.probing;
    if (probe) this.probing = true;
    // Every slot is delivering: this batch was claimed ahead and waits for the first one to end.
    const slot = this.delivering < this.concurrency ? Promise.resolve() : new Promise<void>((resolve) => (this.ahead = resolve));
    if (this.delivering < this.concurrency) this.delivering += 1;
    let delivered = false;
    // The connector call ended: its slot goes to the batch waiting ahead, if any.
    const release = () => {
      if (delivered) return;
      delivered = true;
      const next = this.ahead;
      this.ahead = undefined;
      if (next) next();
      else this.delivering -= 1;
    };
    const run = slot.then(() => this.runInSlot(claimed, () => {
      release();
      // The next claim goes with this settlement: on SQLite in the same message, run right after it.
      this.pump();
    }))
      .catch((error: unknown) => this.host.log.error({ connector: this.name, err: error }, 'delivery batch failed'))
      .finally(() => {
        release();
        if (probe) this.probing = false;
        this.batches.delete(run);
        this.pump();
      });
    this.batches.add(run);
  }

  /**
   * Runs a batch that has its slot; one that waited for it goes back instead when the outbox stopped
   * or was held meanwhile, or when less than half of its lease is left.
   */
  private async runInSlot(claimed: Claimed[], deliveredAll: () => void): Promise<void> {
    const { clock, leaseMs } = this.host;
    const leaseLeft = Math.min(...claimed.map((c) => c.delivery.leaseUntil ?? Infinity)) - clock.now();
    const why = !this.host.isRunning() ? 'handed back before it started, as the outbox stopped'
      : this.host.isHeld() ? 'claimed while deliveries were held; handed back before it started'
        : this.receiver.until > clock.now() ? 'claimed before the receiver asked to wait; handed back before it started'
        : leaseLeft < leaseMs / 2 ? 'claimed ahead; handed back as it waited for half its lease'
          : undefined;
    if (why === undefined) return this.run(claimed, Math.min(leaseMs, leaseLeft), deliveredAll);
    deliveredAll();
    await this.handBack(claimed, why);
  }

  private async run(claimed: Claimed[], leaseMs: number, deliveredAll: () => void): Promise<void> {
    const { clock, store } = this.host;
    const startedAt = clock.now();
    const records = claimed.map(storedRecordOf);
    const present = records.filter((r): r is StoredRecord => r !== undefined);
    const delivered = present.length > 0 ? await this.deliver(present, leaseMs) : [];
    // A record the store cannot give is a store inconsistency, not the connector's business: dead, kept, visible.
    const missing = new BridgeError('outbox.record_missing', 'the record of this delivery is not in the store');
    let next = 0;
    const outcomes = records.map((r): DeliveryOutcome => (r ? delivered[next++]! : { status: 'dead', error: missing }));
    const now = clock.now();
    this.heard(outcomes, startedAt, now);
    // A batch's records share one call, and so its duration; each draws its own jitter. One context
    // for all: settle reads it and keeps nothing of it.
    const context: SettleContext = { now, policy: this.host.policy, stopping: !this.host.isRunning(), durationMs: now - startedAt, random: 0 };
    const results = claimed.map((c, i) => {
      context.random = this.host.random();
      return settle(c.delivery, outcomes[i]!, context);
    });
    const settlements = results.map((r) => r.settlement);
    let recorded: Set<string>;
    try {
      const settling = store.settle(settlements);
      deliveredAll();
      recorded = new Set(await settling);
    } catch (error) {
      const late = await this.settleLater(settlements, claimed, error);
      if (!late) return;
      recorded = late;
    }
    const kept = results.filter((r) => recorded.has(r.delivery.id));
    // A retry may fall due while another batch is in flight, when a claim finds nothing and asks
    // for no wake-up (claimNext): its own time wakes the worker. Not once stopped: a timer set after
    // stop cancelled the wake-ups would hold the process open until it fires.
    const retryAt = Math.min(...kept.map((r) => (r.settlement.status === 'pending' ? r.settlement.runAt : Infinity)));
    if (retryAt !== Infinity && this.host.isRunning()) this.setWake(retryAt);
    this.host.settled(this, kept, startedAt);
  }

  /**
   * A settlement the store could not take for now (a retryable error: it could not write) is sent
   * again every CLAIM_RETRY_MS while the batch's leases last and the outbox runs: the store refuses
   * it only if a lease moved on. Until it is recorded its deliveries stay leased, and on PostgreSQL
   * a batch of the delivery log holds its part of the log, so giving up at once would hold those
   * webhooks' records back for a whole lease. Given up, the leases run out and the records are
   * delivered again, with the same record ids.
   */
  private async settleLater(settlements: Settlement[], claimed: readonly Claimed[], first: unknown): Promise<Set<string> | undefined> {
    const { clock, store, log } = this.host;
    const until = Math.min(...claimed.map((c) => c.delivery.leaseUntil ?? 0));
    if (retryable(first)) {
      log.warn({ connector: this.name, err: describeError(first), count: settlements.length }, 'could not record delivery outcomes; trying again');
    }
    let last = first;
    this.unrecorded += 1;
    try {
      while (retryable(last) && this.host.isRunning() && clock.now() + CLAIM_RETRY_MS < until) {
        try {
          await clock.sleep(CLAIM_RETRY_MS, this.ctx.signal);
        } catch {
          break; // the outbox stopped
        }
        try {
          const recorded = new Set(await store.settle(settlements));
          // The store refuses those whose lease moved on meanwhile: they go out again, under the same ids.
          const lost = settlements.length - recorded.size;
          log.info({ connector: this.name, count: recorded.size, ...(lost > 0 ? { refused: lost } : {}) },
            `recorded ${recorded.size} delivery outcome(s) once the store could write again${lost > 0 ? `; ${lost} refused, their leases taken over: they will be delivered again` : ''}`);
          return recorded;
        } catch (error) {
          last = error;
        }
      }
    } finally {
      this.unrecorded -= 1;
      this.pump();
    }
    log.error({ connector: this.name, err: describeError(last), count: settlements.length }, 'could not record delivery outcomes; they will be delivered again');
    return undefined;
  }

  /** Calls the connector, bounded by what is left of the lease: a delivery that outlives it is abandoned and retried. */
  private async deliver(records: StoredRecord[], leaseMs: number): Promise<DeliveryOutcome[]> {
    const { clock } = this.host;
    const expiry = new AbortController();
    const signal = AbortSignal.any([this.ctx.signal, expiry.signal]);
    const ctx: ConnectorContext = { ...this.ctx, signal, dispatcher: this.guarded };
    const call = Promise.resolve()
      .then(() => this.instance.connector.deliver(ctx, records))
      .then((outcomes) => checkOutcomes(outcomes, records.length), (error: unknown) => failAll(error, records.length))
      .then((outcomes) => maskOutcomes(outcomes, this.secrets));
    const leaseEnd = clock.sleep(leaseMs, expiry.signal).then(() => {
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

  /** What a batch's answers say of the receiver: a wait it asks for holds every delivery to it (receiver-wait.ts). */
  private heard(outcomes: readonly DeliveryOutcome[], startedAt: number, now: number): void {
    const before = this.receiver;
    this.receiver = afterBatch(before, outcomes, startedAt, now);
    if (this.receiver.until > before.until) {
      const until = new Date(this.receiver.until).toISOString();
      this.host.log.info({ connector: this.name, until }, `${this.name}: the receiver asked to wait; no delivery to it starts before ${until}, then one batch goes first`);
    }
  }

  private setWake(at: number): void {
    if (this.wake && this.wake.at <= at) return;
    this.cancelOwnWake();
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

/** The record a claim gives, as connectors get it; undefined when the store could not give it. */
function storedRecordOf(claimed: Claimed): StoredRecord | undefined {
  const { delivery } = claimed;
  if (claimed.json !== undefined) return new StoredRecord(delivery.recordId, delivery.stream, claimed.json);
  if (claimed.created) return new StoredRecord(delivery.recordId, delivery.stream, createdChangeBody(claimed.created));
  return undefined;
}
