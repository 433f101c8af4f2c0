import { createdChangeJson, type ChangeRecord } from '../records.js';
import type { SnapshotRow, SnapshotStore, StagedRow } from '../store/index.js';
import { compareKeys, type Key } from '../streams/index.js';
import type { ParseBatch, ParseSink } from '../upstream/list/index.js';
import { deletedItem, diffText, type DiffContext, type DiffItem } from './diff.js';
import { CHAIN_LENGTH } from './snapshot.js';
import type { Yielder } from '../yielder.js';

/**
 * The diff of one stream, fed batch by batch as the list worker parses the list (poll/README.md).
 * The worker has already set aside what its index knows is unchanged; each other record is diffed
 * against its stored row right away and only what changed is kept: staged in the store (a real
 * cycle), or held (a dry run). On a stream whose snapshot is empty, the worker's rows go to the store
 * as they are. Nothing staged is seen by anyone until the cycle applies it, after every check.
 */
export interface StreamScan extends ParseSink {
  /** Records taken so far (the list's length once the read has finished). */
  readonly fetched: number;
  readonly counts: { created: number; updated: number; deleted: number; baselined: number };
  /** Whether anything was staged (else a commit has nothing to apply). */
  readonly staged: boolean;
  /** Diffs the records still held for a lookup; the cycle calls it once the list has been read whole. */
  flush(): Promise<void>;
  /** Finds and stages the deletions (ascending keys), once the list has been read whole. */
  deletions(keys: readonly Key[]): Promise<void>;
  /** A dry run's changes, in the order a real cycle applies them. */
  changes(): ChangeRecord[];
}

export interface StreamScanOptions {
  ctx: DiffContext;
  snapshot: Pick<SnapshotStore, 'rows' | 'gone' | 'stageFresh' | 'stageChanges'>;
  /** `stage`: into the store (a real cycle); `keep`: in memory (a dry run). */
  mode: 'stage' | 'keep';
  yielder: Yielder;
  signal: AbortSignal;
}

/**
 * Rows looked up, staged or deleted per store call. Each call is one transaction of the database
 * thread, and a webhook's commit may wait behind one: it is kept to a few milliseconds.
 */
const LOOKUP = 100;

export function createStreamScan(options: StreamScanOptions): StreamScan {
  const { ctx, snapshot, mode, yielder, signal } = options;
  const stream = ctx.stream;
  const counts = { created: 0, updated: 0, deleted: 0, baselined: 0 };
  /** A dry run's items, each with its key. */
  const kept: { key: Key; item: DiffItem }[] = [];
  let fetched = 0;
  let staged = false;

  const count = (item: DiffItem) => {
    if (item.change) counts[item.change.op] += 1;
    else if (ctx.initial === 'baseline' && item.stored !== null) counts.baselined += 1;
  };

  async function stage(rows: StagedRow[]): Promise<void> {
    if (rows.length === 0) return;
    staged = true;
    await snapshot.stageChanges(stream, rows);
  }

  /**
   * Records to diff, held until a lookup's worth has come: most batches of a cycle that changes little
   * hold one or two, and a store round trip (two, with the staging) per batch cost more than the diff.
   */
  let held: Pick<ParseBatch, 'keys' | 'texts' | 'hashes'> = { keys: [], texts: [], hashes: [] };

  function hold(batch: ParseBatch): Promise<void> | undefined {
    for (let i = 0; i < batch.keys.length; i++) {
      held.keys.push(batch.keys[i]!);
      held.texts.push(batch.texts[i]!);
      held.hashes.push(batch.hashes[i]!);
    }
    return held.keys.length >= LOOKUP ? flush() : undefined;
  }

  /** Diffs what is held, LOOKUP records at a time: one lookup and one staging call each. */
  async function flush(): Promise<void> {
    const batch = held;
    held = { keys: [], texts: [], hashes: [] };
    for (let i = 0; i < batch.keys.length; i += LOOKUP) {
      const end = i + LOOKUP;
      await diffBatch({ keys: batch.keys.slice(i, end), texts: batch.texts.slice(i, end), hashes: batch.hashes.slice(i, end) });
    }
  }

  async function diffBatch(batch: Pick<ParseBatch, 'keys' | 'texts' | 'hashes'>): Promise<void> {
    const stored = new Map<Key, SnapshotRow>();
    for (const row of await snapshot.rows(stream, batch.keys)) stored.set(row.key, row);
    // Keys the snapshot does not hold: created, from the chain a deletion left, if any.
    const created = batch.keys.filter((key) => !stored.has(key));
    const gone = created.length > 0 ? await snapshot.gone(stream, created) : new Map<string, string>();
    const rows: StagedRow[] = [];
    for (let i = 0; i < batch.keys.length; i++) {
      const key = batch.keys[i]!;
      const text = batch.texts[i]!;
      const before = stored.get(key);
      const item = diffText(ctx, String(key), text, before && before.chain + before.body, undefined, before ? undefined : gone.get(String(key)));
      if (item) {
        count(item);
        if (mode === 'keep') kept.push({ key, item });
        else rows.push(stagedRow(key, item, batch.hashes[i]!, text));
      } else if (before && before.rawHash !== batch.hashes[i]) {
        // The same record in other bytes (spacing, escapes): remember the new bytes, report nothing.
        rows.push({ key, chain: before.chain, body: before.body, rawHash: batch.hashes[i]! });
      }
      if (yielder.due()) await yielder.pause(signal);
    }
    if (mode === 'stage') await stage(rows);
  }

  return {
    batch(batch) {
      fetched += batch.known;
      if (batch.fresh) {
        const n = batch.fresh.keys.length;
        fetched += n;
        if (ctx.initial === 'baseline') counts.baselined += n;
        else counts.created += n;
        staged = true;
        return snapshot.stageFresh(stream, batch.fresh);
      }
      if (batch.keys.length === 0) return undefined;
      fetched += batch.keys.length;
      return hold(batch);
    },
    flush,
    get fetched() {
      return fetched;
    },
    counts,
    get staged() {
      return staged;
    },
    async deletions(keys) {
      for (let i = 0; i < keys.length; i += LOOKUP) {
        const rows = await snapshot.rows(stream, keys.slice(i, i + LOOKUP));
        const items: { key: Key; item: DiffItem }[] = [];
        for (const row of rows) {
          items.push({ key: row.key, item: deletedItem(ctx, String(row.key), row.chain + row.body) });
          if (yielder.due()) await yielder.pause(signal);
        }
        for (const { item } of items) count(item);
        if (mode === 'keep') kept.push(...items);
        else await stage(items.map(({ key, item }) => stagedRow(key, item, null, undefined)));
      }
    },
    changes: () => {
      const sorted = kept.filter(({ item }) => item.stored !== null).sort((a, b) => compareKeys(a.key, b.key));
      const gone = kept.filter(({ item }) => item.stored === null);
      return [...sorted, ...gone].flatMap(({ item }) => (item.change ? [item.change] : []));
    },
  };
}

/** A diff item as the store stages it; a created change keeps the record's text as it came. */
function stagedRow(key: Key, item: DiffItem, rawHash: string | null, text: string | undefined): StagedRow {
  const chain = item.stored === null ? (item.gone ?? '') : item.stored.slice(0, CHAIN_LENGTH);
  const body = item.stored === null ? null : item.stored.slice(CHAIN_LENGTH);
  const change = item.change;
  if (!change) return { key, chain, body, rawHash };
  const json = change.op === 'created' && text !== undefined
    ? createdChangeJson({ stream: change.stream, key, chain, detectedAt: change.detectedAt, text })
    : JSON.stringify(change);
  return { key, chain, body, rawHash, change: { id: change.id, json } };
}
