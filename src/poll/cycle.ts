import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { ChangeRecord } from '../records.js';
import type { SnapshotStore, StateStore } from '../store/index.js';
import type { Key, PolledStreamName as PolledStream } from '../streams/index.js';
import type { ListWorker } from '../upstream/list/index.js';
import { checkDeleteGuard, type AbortReason } from './guard.js';
import type { ListSource, OutboxPort } from './ports.js';
import { initialDoneKey } from './snapshot.js';
import { createStreamScan, type StreamScan } from './stream-scan.js';
import { createYielder, type Yielder } from '../yielder.js';

/**
 * One poll cycle (poll/README.md): read the full list of every polled stream at once, diffing each
 * record against the snapshot as it is parsed and staging what changed in the store; check them; then
 * apply what was staged, a chunk per transaction, each chunk's snapshot rows with their change records
 * (the Airbyte rule: the state advances only with the records before it). Order matters:
 *   read + diff + stage (every list whole) → duplicate keys → delete guard (every stream) → deletions → apply.
 * Nothing a reader sees moves until every list has ended whole and every check of every stream has
 * passed, so a truncated body or an aborted cycle leaves the snapshot as it was. A crash between two
 * applied chunks leaves whole chunks; the next cycle finds the rest again with the same change ids.
 */
export interface CycleDeps {
  snapshot: SnapshotStore;
  state: StateStore;
  upstream: ListSource;
  outbox: OutboxPort;
  clock: Clock;
  log: Logger;
  initial: 'emit' | 'baseline';
  maxDeleteRatio: number;
  /** Staged rows applied per transaction. */
  applyChunk: number;
  budgetMs: number;
  /** Parses the lists off the event loop, with the snapshot's raw index (src/upstream/list/worker.ts). */
  lists: ListWorker;
  /** The streams this cycle polls, in the order of the registry (src/streams/). */
  streams: readonly PolledStream[];
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
  /** Per polled stream; a stream the cycle does not poll is absent. */
  streams: StreamSummaries;
  /** Dry runs only: the changes that a real cycle would commit. */
  changes?: ChangeRecord[];
  /** A failed cycle whose upstream asked to wait (Retry-After), in ms: scheduled cycles wait so long. */
  retryAfterMs?: number;
}

export type StreamSummaries = Partial<Record<PolledStream, StreamSummary>>;

export interface CycleOptions {
  dryRun: boolean;
  trigger: string;
  signal: AbortSignal;
}

export class CycleAbort extends Error {
  constructor(readonly reason: AbortReason, readonly stream: PolledStream, message: string) {
    super(message);
  }
}

interface Scanned {
  stream: PolledStream;
  scan: StreamScan;
  /** The stream's snapshot was empty: the staged rows are a whole new snapshot. */
  fresh: boolean;
  size: number;
  initial: 'emit' | 'baseline' | undefined;
  deleted: readonly Key[];
  duplicate: Key | undefined;
  /** The list worker's id of the read (its index is adopted once the cycle has committed). */
  readId: number;
}

/** Runs the checks and the diff; throws CycleAbort for a guard, BridgeError for an upstream or store failure. */
export async function runPollCycle(deps: CycleDeps, options: CycleOptions, summary: StreamSummaries, phases: Partial<CyclePhases> = {}) {
  let phaseStart = deps.clock.now();
  const phaseDone = (phase: keyof CyclePhases) => {
    const now = deps.clock.now();
    phases[phase] = now - phaseStart;
    phaseStart = now;
  };
  const detectedAt = new Date(deps.clock.now()).toISOString();
  const yielder = createYielder(deps.budgetMs);
  const staged = options.dryRun ? [] : deps.streams;
  try {
    // A dry run stages nothing (a CLI beside the daemon reads a store it may not write).
    if (staged.length > 0) await deps.snapshot.reserve(staged);
    const scans = await readAll(deps, detectedAt, options, yielder);
    phaseDone('readMs');
    for (const scanned of scans) {
      const one = (summary[scanned.stream] ??= emptyStreamSummary());
      one.fetched = scanned.scan.fetched;
      if (scanned.initial) one.initial = scanned.initial;
    }
    for (const scanned of scans) check(deps, scanned);
    for (const scanned of scans) {
      await scanned.scan.deletions(scanned.deleted);
      Object.assign(summary[scanned.stream]!, scanned.scan.counts);
    }
    phaseDone('checkMs');
    if (options.dryRun) return { changes: scans.flatMap((s) => s.scan.changes()) };
    const resume = deps.outbox.holdDeliveries();
    try {
      for (const scanned of scans) await apply(deps, scanned, detectedAt, options.signal);
    } finally {
      resume();
    }
    phaseDone('commitMs');
    return { changes: [] };
  } catch (error) {
    // Whatever was staged is dropped; a failed apply keeps the chunks that made it, as they are whole.
    for (const stream of staged) await deps.snapshot.discard(stream).catch(() => {});
    throw error;
  }
}

/**
 * Reads every list at once. When one read fails the others are stopped, and all have ended before
 * this rejects (with the first failure): nothing of a failed cycle stages into the next one's tables.
 */
async function readAll(deps: CycleDeps, detectedAt: string, options: CycleOptions, yielder: Yielder): Promise<Scanned[]> {
  const stop = new AbortController();
  const signal = AbortSignal.any([options.signal, stop.signal]);
  let first: { error: unknown } | undefined;
  const results = await Promise.allSettled(deps.streams.map((stream) =>
    scanStream(deps, stream, detectedAt, { ...options, signal }, yielder).catch((error: unknown) => {
      first ??= { error };
      stop.abort(error);
      throw error;
    })));
  if (first) throw first.error;
  return results.map((r) => (r as PromiseFulfilledResult<Scanned>).value);
}

/** Reads one list through the list worker into a StreamScan; a retried read starts staging afresh. */
async function scanStream(deps: CycleDeps, stream: PolledStream, detectedAt: string, options: CycleOptions, yielder: Yielder): Promise<Scanned> {
  const size = await deps.snapshot.size(stream);
  const initial = (await deps.state.get(initialDoneKey(stream))) === undefined ? deps.initial : undefined;
  // A snapshot that held rows is never empty again (the empty_list guard), so a fresh one has no
  // deleted keys whose chains its rows would have to start from (snapshot_gone).
  const fresh = size === 0 && !options.dryRun;
  if (!fresh) {
    const version = await deps.snapshot.version(stream);
    if (deps.lists.indexVersion(stream) !== version) deps.lists.setIndex(stream, await deps.snapshot.index(stream));
  }
  const ctx = { stream, detectedAt, initial };
  let scan = createStreamScan({ ctx, snapshot: deps.snapshot, mode: options.dryRun ? 'keep' : 'stage', yielder, signal: options.signal });
  const { end, id } = await deps.upstream.fetchList(stream, async (body, paging) => {
    if (!options.dryRun) await deps.snapshot.begin(stream, fresh ? 'fresh' : 'changes');
    scan = createStreamScan({ ctx, snapshot: deps.snapshot, mode: options.dryRun ? 'keep' : 'stage', yielder, signal: options.signal });
    const read = await deps.lists.parse(stream, body, { useIndex: !fresh, fresh: fresh ? { initial } : undefined, paging, signal: options.signal }, scan);
    await scan.flush();
    return read;
  }, { signal: options.signal });
  return { stream, scan, fresh, size, initial, deleted: end.deleted, duplicate: end.duplicate, readId: id };
}

/** The checks of one read list: a duplicate id, then the delete guard. */
function check(deps: CycleDeps, scanned: Scanned): void {
  const { stream, scan } = scanned;
  if (scanned.duplicate !== undefined) throw new CycleAbort('duplicate_id', stream, `the ${stream} list holds id ${String(scanned.duplicate)} twice`);
  const verdict = checkDeleteGuard({
    stream, snapshotSize: scanned.size, fetched: scan.fetched, deletes: scanned.deleted.length, maxDeleteRatio: deps.maxDeleteRatio,
  });
  if (verdict) throw new CycleAbort(verdict.reason, stream, verdict.message);
}

/** Created changes turned into rows per transaction, before a cycle changes their stream. */
const MATERIALIZE_CHUNK = 1000;

/**
 * Applies one stream's staged rows. A created change is made from its snapshot row, so the changes
 * a fresh snapshot still owes from its ranges get rows of their own (which keep their text) before
 * the snapshot moves; the list worker's index is dropped before the first write and replaced by this
 * read's only after the last.
 */
async function apply(deps: CycleDeps, scanned: Scanned, detectedAt: string, signal: AbortSignal): Promise<void> {
  const { stream, initial } = scanned;
  const state = initial ? { [initialDoneKey(stream)]: { at: detectedAt, mode: initial } } : {};
  const connectors = deps.outbox.subscribers(stream);
  if (scanned.fresh) {
    deps.lists.drop(stream);
    const emit = initial !== 'baseline' && connectors.length > 0;
    await deps.snapshot.applyFresh(stream, { state, ...(emit ? { created: { detectedAt, connectors, now: deps.clock.now() } } : {}) });
    deps.outbox.notify();
  } else if (scanned.scan.staged || initial) {
    while ((await deps.snapshot.materializeCreated(stream, MATERIALIZE_CHUNK, deps.clock.now())) > 0) signal.throwIfAborted();
    deps.lists.drop(stream);
    for (;;) {
      const { applied, done } = await deps.snapshot.applyChanges(stream, { limit: deps.applyChunk, connectors, state, now: deps.clock.now() });
      if (applied > 0) deps.outbox.notify();
      if (done) break;
      // Stopping between chunks leaves whole chunks; the next cycle finds the rest again.
      signal.throwIfAborted();
    }
  } else {
    await deps.snapshot.discard(stream);
  }
  deps.lists.adopt(stream, scanned.readId, await deps.snapshot.version(stream));
}

const emptyStreamSummary = (): StreamSummary => ({ fetched: 0, created: 0, updated: 0, deleted: 0, baselined: 0 });

/** A summary of nothing yet for each of the streams: what a cycle that fails early reports. */
export function emptySummary(streams: readonly PolledStream[]): StreamSummaries {
  return Object.fromEntries(streams.map((stream) => [stream, emptyStreamSummary()]));
}
