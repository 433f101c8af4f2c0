import type { Key, SnapshotStream } from '../port.js';

/**
 * The keys of a fresh snapshot being staged, kept by the database thread beside the staging table,
 * so that the swap can split the stream's created range into parts (range-parts.ts) without reading
 * the table again (a count of its keys reads every page of it). Only a hint: a thread that started
 * after the staging began has none, and a staging run again after a rollback may hold keys twice;
 * the swap uses them only when their number is the staged count, and owes one range otherwise.
 */
const staged = new WeakMap<object, Map<SnapshotStream, Key[]>>();

function of(db: object): Map<SnapshotStream, Key[]> {
  let streams = staged.get(db);
  if (!streams) staged.set(db, (streams = new Map()));
  return streams;
}

export function beginKeys(db: object, stream: SnapshotStream): void {
  of(db).set(stream, []);
}

export function addKeys(db: object, stream: SnapshotStream, keys: readonly Key[]): void {
  const list = of(db).get(stream);
  if (list) for (const key of keys) list.push(key);
}

export function dropKeys(db: object, stream: SnapshotStream): void {
  of(db).delete(stream);
}

/** The staged keys, if exactly `count` were kept; forgets them either way. */
export function takeKeys(db: object, stream: SnapshotStream, count: number): Key[] | undefined {
  const list = of(db).get(stream);
  dropKeys(db, stream);
  return list?.length === count ? list : undefined;
}
