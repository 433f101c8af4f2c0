import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { ChangeOp, ChangeRecord } from '../records.js';
import type { Op, Store } from '../store/index.js';
import { backlogKey, type Backlog, type BacklogMarker } from './backlog.js';
import { commitItems } from './commit.js';
import { deletedItem, type DiffContext, type DiffItem } from './diff.js';
import { checkDeleteGuard, type AbortReason, type GuardVerdict } from './guard.js';
import type { ListSource, OutboxPort } from './ports.js';
import { initialDoneKey, POLLED_STREAMS, STATE_COLLECTION, storeSnapshotView, type PolledStream, type SnapshotView } from './snapshot.js';
import type { ListWorker } from './list-worker.js';
import { createStreamScan, type StreamScan } from './stream-scan.js';
import { createYielder, type Yielder } from './yielder.js';

/**
 * One poll cycle (issue 7): read both full lists, diffing each record against the snapshot as it is
 * parsed (stream-scan.ts: only changes are held, not 300,000 parsed records), check them, and commit
 * each chunk of changes together with its snapshot entries in ONE store commit (the Airbyte rule: the
 * state advances only with the records before it). Order matters:
 *   read + diff (both lists whole) → duplicate ids → delete guard (both streams) → deletions → commit.
 * Nothing is committed until both lists have ended whole and every check of every stream has passed,
 * so a truncated body or an aborted cycle leaves the snapshot as it was. A crash between two commits leaves whole chunks only; the next cycle detects
 * the rest again with the same change ids (see diff.ts).
 */
export interface CycleDeps {
  store: Store;
  upstream: ListSource;
  outbox: OutboxPort;
  clock: Clock;
  log: Logger;
  initial: 'emit' | 'baseline';
  maxDeleteRatio: number;
  chunkSize: number;
  chunkBytes: number;
  maxInFlight: number;
  budgetMs: number;
  /**
   * Parses the lists off the event loop (list-worker.ts). It keeps, per stream, the raw index of the
   * last cycle that committed whole: records whose bytes are in it are taken without parsing. In
   * memory only (a restart starts without one); dropped as soon as a commit begins and replaced only
   * after the last one, so a cycle failing halfway never leaves an index that disagrees with the snapshot.
   */
  lists: ListWorker;
  /** The created changes of first `emit` cycles, enqueued after the cycle (backlog.ts). */
  backlog: Backlog;
}

export interface StreamSummary {
  fetched: number;
  created: number;
  updated: number;
  deleted: number;
  /** Records recorded silently (poll.initial: baseline). */
  baselined: number;
  /** Set on the stream's first cycle. */
  initial?: 'emit' | 'baseline';
}

/** Where a cycle's time went (ms): reading and diffing both lists, the checks and deletions, the commit. */
export interface CyclePhases {
  readMs: number;
  checkMs: number;
  commitMs: number;
}

export interface CycleResult {
  outcome: 'ok' | 'aborted' | 'failed';
  /** Abort reason (empty_list, mass_delete, duplicate_id) or error code. */
  reason?: string;
  message?: string;
  /** The stream whose list tripped the guard (aborted cycles). */
  stream?: PolledStream;
  dryRun: boolean;
  trigger: string;
  startedAt: string;
  durationMs: number;
  /** Phases reached, in order; a failed or aborted cycle has the ones it finished. */
  phases: Partial<CyclePhases>;
  streams: Record<PolledStream, StreamSummary>;
  /** Dry runs only: the changes that a real cycle would commit. */
  changes?: ChangeRecord[];
}

export interface CycleOptions {
  dryRun: boolean;
  trigger: string;
  signal: AbortSignal;
  /** Keep the whole students list for the caller (the roster export); otherwise records are dropped as diffed. */
  keepStudents?: boolean;
}

interface StreamPlan {
  stream: PolledStream;
  readId: number;
  scan: StreamScan;
  snapshot: SnapshotView;
  missing: string[];
  initial: 'emit' | 'baseline' | undefined;
  verdict: GuardVerdict | undefined;
}

export class CycleAbort extends Error {
  constructor(readonly reason: AbortReason, readonly stream: PolledStream, message: string) {
    super(message);
  }
}

/** Runs the checks and the diff; throws CycleAbort for a guard, BridgeError for an upstream or store failure. */
export async function runPollCycle(deps: CycleDeps, options: CycleOptions, summary: Record<PolledStream, StreamSummary>, phases: Partial<CyclePhases> = {}) {
  const { signal } = options;
  let phaseStart = deps.clock.now();
  const phaseDone = (phase: keyof CyclePhases) => {
    const now = deps.clock.now();
    phases[phase] = now - phaseStart;
    phaseStart = now;
  };
  const detectedAt = new Date(deps.clock.now()).toISOString();
  // Both lists are read and diffed record by record as they arrive; only changes are held. The reads
  // must both finish whole before anything below runs: a truncated body rejects here.
  const scans = await Promise.all(POLLED_STREAMS.map((stream) => scanStream(deps, stream, detectedAt, options)));
  phaseDone('readMs');
  const yielder = createYielder(deps.budgetMs);
  const plans: StreamPlan[] = [];
  for (const scanned of scans) plans.push(await planStream(deps, scanned, yielder, signal));
  for (const plan of plans) {
    summary[plan.stream].fetched = plan.scan.fetched;
    if (plan.initial) summary[plan.stream].initial = plan.initial;
  }
  for (const plan of plans) if (plan.verdict) throw new CycleAbort(plan.verdict.reason, plan.stream, plan.verdict.message);
  const diffs: { plan: StreamPlan; items: DiffItem[] }[] = [];
  for (const plan of plans) {
    const items = await withDeletions(plan, { stream: plan.stream, detectedAt, initial: plan.initial }, yielder, signal);
    await count(summary[plan.stream], items, plan.initial === 'baseline', yielder, signal);
    diffs.push({ plan, items });
  }
  // Only dry runs return their changes: a real cycle's are in the outbox (and may be 300,000).
  const changes = options.dryRun ? diffs.flatMap(({ items }) => items.flatMap((item) => (item.change ? [item.change] : []))) : [];
  phaseDone('checkMs');
  if (!options.dryRun) {
    // A first cycle writes ~400 MB: a checkpoint started halfway would write the snapshot twice.
    const release = deps.store.holdCheckpoints();
    // Its records are delivered once the commit is done, not beside it on this thread: with the
    // deliveries of 300,000 records interleaved, a first `emit` cycle's commit took 9.5-14.8 s, 5.6-5.8 s
    // without (poll/README.md).
    const resume = deps.outbox.holdDeliveries();
    try {
      await commitAll(deps, diffs, detectedAt, yielder, signal);
    } finally {
      resume();
      release();
      // What a first `emit` cycle left to the backlog goes into the outbox from now on (after a
      // failed commit too: the chunks that did commit have their marker).
      deps.backlog.kick();
    }
    phaseDone('commitMs');
  }
  const students = plans.find((plan) => plan.stream === 'students')?.scan.kept();
  return { changes, students };
}

/**
 * Commits each stream's items; the raw indexes follow (dropped before, adopted after every commit).
 * A stream's backlog is finished before its snapshot moves (backlog.ts: an entry must not change
 * before its created change is in the outbox). A cycle on an empty snapshot (a first `emit` cycle, or
 * a stream whose first list was empty), where every item is a created change, leaves its changes to
 * the backlog: its marker goes with the first chunk.
 */
async function commitAll(deps: CycleDeps, diffs: { plan: StreamPlan; items: DiffItem[] }[], detectedAt: string, yielder: Yielder, signal: AbortSignal) {
  for (const { plan, items } of diffs) {
    const last: Op[] = plan.initial ? [{ op: 'put', c: STATE_COLLECTION, k: initialDoneKey(plan.stream), v: { at: detectedAt, mode: plan.initial } }] : [];
    if (items.length === 0 && last.length === 0) continue;
    await deps.backlog.finish(plan.stream);
    // Deferred items (a scan of an empty snapshot, DiffItem.deferred) carry no change: the marker is
    // the promise of one created change per entry of the stream, so there must be no other entry.
    const deferred = items.some((item) => item.deferred);
    if (deferred && plan.snapshot.size > 0) throw new Error(`deferred created changes of ${plan.stream} over a snapshot that is not empty`);
    const marker: BacklogMarker = { detectedAt };
    const first: Op[] = deferred ? [{ op: 'put', c: STATE_COLLECTION, k: backlogKey(plan.stream), v: marker }] : [];
    deps.lists.drop(plan.stream);
    await commitItems(deps, plan.stream, items, { first, last }, yielder, signal);
  }
  for (const { plan } of diffs) deps.lists.adopt(plan.stream, plan.readId);
}

interface Scanned {
  stream: PolledStream;
  scan: StreamScan;
  snapshot: SnapshotView;
  initial: 'emit' | 'baseline' | undefined;
  /** The list worker's id of the read (its index is adopted once the cycle has committed). */
  readId: number;
}

/** Reads one list through the list worker into a StreamScan; a retried read starts a fresh one. */
async function scanStream(deps: CycleDeps, stream: PolledStream, detectedAt: string, options: CycleOptions): Promise<Scanned> {
  const snapshot = storeSnapshotView(deps.store, stream);
  const initial = deps.store.has(STATE_COLLECTION, initialDoneKey(stream)) ? undefined : deps.initial;
  const ctx = { stream, detectedAt, initial, deferCreated: !options.dryRun };
  const keep = stream === 'students' && options.keepStudents === true;
  // The roster export keeps whole records, so every one is parsed: no index then.
  let useIndex = !keep;
  for (;;) {
    let scan = createStreamScan(ctx, snapshot, keep);
    const { id } = await deps.upstream.fetchList(stream, (body) => {
      scan = createStreamScan(ctx, snapshot, keep);
      // An empty snapshot (a first cycle): the worker makes each record's snapshot entry as well.
      const fresh = snapshot.size === 0 ? { initial } : undefined;
      return deps.lists.parse(stream, body, { useIndex, fresh, signal: options.signal }, scan);
    }, { signal: options.signal });
    if (scan.stale === undefined || !useIndex) return { stream, scan, snapshot, initial, readId: id };
    deps.log.warn({ stream, key: scan.stale }, 'the raw index knew a record the snapshot does not hold: reading the list again in full');
    deps.lists.drop(stream);
    useIndex = false;
  }
}

/** Checks one read list and finds its deletions; yields (200,000 snapshot keys are ~100 ms of work). */
async function planStream(deps: CycleDeps, scanned: Scanned, yielder: Yielder, signal: AbortSignal): Promise<StreamPlan> {
  const { stream, scan, snapshot, initial, readId } = scanned;
  if (scan.duplicate !== undefined) {
    const verdict = { reason: 'duplicate_id' as const, stream, message: `the ${stream} list holds id ${scan.duplicate} twice` };
    return { ...scanned, missing: [], verdict };
  }
  const missing: string[] = [];
  for (const key of snapshot.keys()) {
    if (!scan.present.has(key)) missing.push(key);
    if (yielder.due()) await yielder.pause(signal);
  }
  missing.sort((a, b) => Number(a) - Number(b));
  const verdict = checkDeleteGuard({
    stream, snapshotSize: snapshot.size, fetched: scan.fetched, deletes: missing.length, maxDeleteRatio: deps.maxDeleteRatio,
  });
  return { stream, readId, scan, snapshot, missing, initial, verdict };
}

/** The scan's items followed by the deletions, ascending by id within each (the commit order). */
async function withDeletions(plan: StreamPlan, ctx: DiffContext, yielder: Yielder, signal: AbortSignal): Promise<DiffItem[]> {
  const items = plan.scan.items();
  for (const key of plan.missing) {
    items.push(deletedItem(ctx, key, plan.snapshot.get(key) as string));
    if (yielder.due()) await yielder.pause(signal);
  }
  return items;
}

/** Tallies a stream's items; yields like the other loops over them (a first cycle has 200,000: ~10 ms). */
async function count(summary: StreamSummary, items: readonly DiffItem[], baseline: boolean, yielder: Yielder, signal: AbortSignal): Promise<void> {
  for (const item of items) {
    const op: ChangeOp | undefined = item.change?.op ?? (item.deferred ? 'created' : undefined);
    if (op) summary[op] += 1;
    else if (baseline) summary.baselined += 1; // otherwise an entry rewritten without a change
    if (yielder.due()) await yielder.pause(signal);
  }
}

export function emptySummary(): Record<PolledStream, StreamSummary> {
  const one = (): StreamSummary => ({ fetched: 0, created: 0, updated: 0, deleted: 0, baselined: 0 });
  return { students: one(), users: one() };
}
