import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { ChangeOp, ChangeRecord } from '../records.js';
import type { Store } from '../store/index.js';
import { commitItems } from './commit.js';
import { deletedItem, diffRecord, sortById, type DiffContext, type DiffItem, type PolledRecord } from './diff.js';
import { checkDeleteGuard, type AbortReason, type GuardVerdict } from './guard.js';
import type { ListSource, OutboxPort } from './ports.js';
import { initialDoneKey, POLLED_STREAMS, STATE_COLLECTION, storeSnapshotView, type PolledStream, type SnapshotView } from './snapshot.js';
import { createYielder, type Yielder } from './yielder.js';

/**
 * One poll cycle (issue 7): fetch both full lists, check them, diff them against the snapshot, and
 * commit each chunk of changes together with its snapshot entries in ONE store commit (the Airbyte
 * rule: the state advances only with the records before it). Order matters:
 *   fetch → duplicate ids → delete guard (both streams) → diff → commit.
 * Nothing is committed until every check of every stream has passed, so an aborted cycle leaves the
 * snapshot as it was. A crash between two commits leaves whole chunks only; the next cycle detects
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
  streams: Record<PolledStream, StreamSummary>;
  /** Dry runs only: the changes that a real cycle would commit. */
  changes?: ChangeRecord[];
}

export interface CycleOptions {
  dryRun: boolean;
  trigger: string;
  signal: AbortSignal;
}

interface StreamPlan {
  stream: PolledStream;
  records: readonly PolledRecord[];
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
export async function runPollCycle(deps: CycleDeps, options: CycleOptions, summary: Record<PolledStream, StreamSummary>) {
  const { signal } = options;
  const detectedAt = new Date(deps.clock.now()).toISOString();
  const [students, users] = await Promise.all([deps.upstream.listStudents({ signal }), deps.upstream.listUsers({ signal })]);
  const lists: Record<PolledStream, readonly PolledRecord[]> = { students, users };
  const yielder = createYielder(deps.budgetMs);
  const plans: StreamPlan[] = [];
  for (const stream of POLLED_STREAMS) plans.push(await planStream(deps, stream, lists[stream], yielder, signal));
  for (const plan of plans) {
    summary[plan.stream].fetched = plan.records.length;
    if (plan.initial) summary[plan.stream].initial = plan.initial;
  }
  for (const plan of plans) if (plan.verdict) throw new CycleAbort(plan.verdict.reason, plan.stream, plan.verdict.message);
  const diffs: { plan: StreamPlan; items: DiffItem[] }[] = [];
  for (const plan of plans) {
    const items = await diffStream(plan, { stream: plan.stream, detectedAt, initial: plan.initial }, yielder, signal);
    count(summary[plan.stream], items, plan.initial === 'baseline');
    diffs.push({ plan, items });
  }
  // Only dry runs return their changes: a real cycle's are in the outbox (and may be 300,000).
  const changes = options.dryRun ? diffs.flatMap(({ items }) => items.flatMap((item) => (item.change ? [item.change] : []))) : [];
  if (!options.dryRun) {
    for (const { plan, items } of diffs) {
      const marker = plan.initial ? { c: STATE_COLLECTION, k: initialDoneKey(plan.stream), v: { at: detectedAt, mode: plan.initial } } : undefined;
      await commitItems(deps, plan.stream, items, marker, yielder, signal);
    }
  }
  return { changes, students: lists.students };
}

/** Checks one list and finds its deletions; yields like the diff (200,000 keys are ~100 ms of work). */
async function planStream(deps: CycleDeps, stream: PolledStream, fetched: readonly PolledRecord[], yielder: Yielder, signal: AbortSignal): Promise<StreamPlan> {
  const snapshot = storeSnapshotView(deps.store, stream);
  const initial = deps.store.has(STATE_COLLECTION, initialDoneKey(stream)) ? undefined : deps.initial;
  const records = sortById(fetched);
  const present = new Set<string>();
  for (const record of records) {
    const key = String(record.id);
    if (present.has(key)) {
      const verdict = { reason: 'duplicate_id' as const, stream, message: `the ${stream} list holds id ${key} twice` };
      return { stream, records, snapshot, missing: [], initial, verdict };
    }
    present.add(key);
    if (yielder.due()) await yielder.pause(signal);
  }
  const missing: string[] = [];
  for (const key of snapshot.keys()) {
    if (!present.has(key)) missing.push(key);
    if (yielder.due()) await yielder.pause(signal);
  }
  missing.sort((a, b) => Number(a) - Number(b));
  const verdict = checkDeleteGuard({
    stream, snapshotSize: snapshot.size, fetched: records.length, deletes: missing.length, maxDeleteRatio: deps.maxDeleteRatio,
  });
  return { stream, records, snapshot, missing, initial, verdict };
}

async function diffStream(plan: StreamPlan, ctx: DiffContext, yielder: Yielder, signal: AbortSignal): Promise<DiffItem[]> {
  const items: DiffItem[] = [];
  for (const record of plan.records) {
    const item = diffRecord(ctx, record, plan.snapshot.get(String(record.id)));
    if (item) items.push(item);
    if (yielder.due()) await yielder.pause(signal);
  }
  for (const key of plan.missing) {
    items.push(deletedItem(ctx, key, plan.snapshot.get(key) as string));
    if (yielder.due()) await yielder.pause(signal);
  }
  return items;
}

function count(summary: StreamSummary, items: readonly DiffItem[], baseline: boolean): void {
  for (const item of items) {
    const op: ChangeOp | undefined = item.change?.op;
    if (op) summary[op] += 1;
    else if (baseline) summary.baselined += 1; // otherwise an entry rewritten without a change
  }
}

export function emptySummary(): Record<PolledStream, StreamSummary> {
  const one = (): StreamSummary => ({ fetched: 0, created: 0, updated: 0, deleted: 0, baselined: 0 });
  return { students: one(), users: one() };
}
