import type { ChangeRecord } from '../records.js';
import type { Op } from '../store/index.js';
import type { CycleDeps } from './cycle.js';
import type { DiffItem } from './diff.js';
import { CHAIN_LENGTH, deleteEntryOp, putEntryOp, type PolledStream } from './snapshot.js';
import type { Yielder } from './yielder.js';

/**
 * The commit protocol (issue 7, the Airbyte rule). Each chunk of diff items becomes ONE store commit
 * holding both the snapshot entries and the outbox entries of its change records, built with
 * `enqueueOps` and committed in the same tick, so no change can be in the snapshot without being in
 * the outbox or the reverse. Chunks keep each WAL line (and the JSON.stringify that makes it) small
 * enough not to stall webhook acknowledgements; a few commits are in flight at once so group commit
 * can share fsyncs. The `state` marker of a first cycle rides with the stream's last chunk; on a
 * first `emit` cycle the created changes are left to the backlog, whose marker rides with the first.
 */
export type CommitDeps = Pick<CycleDeps, 'store' | 'outbox' | 'chunkSize' | 'chunkBytes' | 'maxInFlight'>;

export interface CommitPlan {
  /** Ops committed with the first chunk (the backlog's marker: before any entry it covers). */
  first: Op[];
  /** Ops committed with the last chunk (the `state` marker of a first cycle). */
  last: Op[];
}

export async function commitItems(
  deps: CommitDeps,
  stream: PolledStream,
  items: readonly DiffItem[],
  plan: CommitPlan,
  yielder: Yielder,
  signal: AbortSignal,
): Promise<void> {
  if (items.length === 0) {
    if (plan.first.length + plan.last.length > 0) await deps.store.commit([...plan.first, ...plan.last]);
    return;
  }
  const inFlight: Promise<void>[] = [];
  try {
    for (let start = 0; start < items.length; ) {
      const end = chunkEnd(items, start, deps.chunkSize, deps.chunkBytes);
      const extra = [...(start === 0 ? plan.first : []), ...(end === items.length ? plan.last : [])];
      inFlight.push(commitChunk(deps, stream, items.slice(start, end), extra));
      start = end;
      if (inFlight.length >= deps.maxInFlight) await inFlight.shift();
      signal.throwIfAborted();
      if (yielder.due()) await yielder.pause(signal);
    }
    await Promise.all(inFlight);
  } catch (error) {
    // Whole chunks only: let the ones already handed to the store settle before reporting.
    await Promise.allSettled(inFlight);
    throw error;
  }
}

function commitChunk(deps: CommitDeps, stream: PolledStream, chunk: readonly DiffItem[], extra: Op[]): Promise<void> {
  const ops: Op[] = chunk.map((item) => (item.stored === null ? deleteEntryOp(stream, item.key) : putEntryOp(stream, item.key, item.stored, item.raw)));
  // A deferred item (a first cycle's, DiffItem.deferred) has no change here: the backlog makes it.
  const records = chunk.flatMap((item) => (item.change ? [item.change] : []));
  // enqueueOps reads the outbox's in-memory state, and commit applies in memory synchronously: keep
  // the two in one tick so the next chunk's enqueueOps sees this one.
  const enqueue = records.length > 0 ? deps.outbox.enqueueOps(records) : [];
  if (enqueue.length > 0) attachJson(chunk, enqueue);
  const committed = deps.store.commit([...ops, ...extra, ...enqueue]).then(() => {
    if (records.length > 0) deps.outbox.notify();
  });
  committed.catch(() => {}); // awaited by the caller; this only marks it handled while it waits in line
  return committed;
}

/**
 * The outbox stores each change record as a store value; its JSON is mostly the record's text and the
 * previous text, which the diff already has. Giving the store that text (Op.json) saves serializing
 * each changed record again. Matched by identity, so it does not depend on how the
 * outbox lays out its ops; a value we do not recognise is serialized by the store as usual.
 */
function attachJson(chunk: readonly DiffItem[], ops: Op[]): void {
  const byChange = new Map<unknown, DiffItem>();
  for (const item of chunk) if (item.change) byChange.set(item.change, item);
  for (const op of ops) {
    if (op.op !== 'put') continue;
    const item = byChange.get(op.v);
    // A text the outbox found already (knownJson: a CreatedChange carries its own) is kept.
    if (op.json !== undefined || !item?.change) continue;
    const json = changeJson(item.change, item.stored === null ? null : item.stored.slice(CHAIN_LENGTH), item.previousJson ?? null);
    if (json !== undefined) op.json = json;
  }
}

const TAIL = ',"record":null,"previous":null}';

/** JSON.stringify(change) with the record and previous texts spliced in, or undefined if the shape is not the known one. */
export function changeJson(change: ChangeRecord, recordJson: string | null, previousJson: string | null): string | undefined {
  if ((change.record === null) !== (recordJson === null) || (change.previous === null) !== (previousJson === null)) return undefined;
  const head = JSON.stringify({ ...change, record: null, previous: null });
  if (!head.endsWith(TAIL)) return undefined;
  return `${head.slice(0, -TAIL.length)},"record":${recordJson ?? 'null'},"previous":${previousJson ?? 'null'}}`;
}

/** End of the chunk starting at `start`: at most `maxItems` items and about `maxBytes` of values. */
export function chunkEnd(items: readonly DiffItem[], start: number, maxItems: number, maxBytes: number): number {
  let bytes = 0;
  let end = start;
  while (end < items.length && end - start < maxItems) {
    const item = items[end] as DiffItem;
    // A change carries the record twice more (record/previous) beside its snapshot entry.
    bytes += (item.stored?.length ?? 1000) * (item.change ? 3 : 1);
    end += 1;
    if (bytes >= maxBytes) break;
  }
  return end;
}
