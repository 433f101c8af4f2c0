import type { DiffContext } from './diff.js';
import type { FreshEntries } from './list-parse.js';
import type { PolledStream } from './snapshot.js';

/** Messages between the list worker (list-worker-thread.ts) and its main-thread side (list-worker.ts). */
export type ToWorker =
  | { t: 'begin'; id: number; stream: PolledStream; useIndex: boolean; fresh?: { initial: DiffContext['initial'] } }
  | { t: 'chunk'; id: number; bytes: Uint8Array }
  | { t: 'end'; id: number; stream: PolledStream }
  | { t: 'abort'; id: number }
  /** A commit of the stream begins: its committed index no longer matches the snapshot. */
  | { t: 'drop'; stream: PolledStream }
  /** Every commit of the cycle succeeded: read `id`'s index becomes the stream's committed one. */
  | { t: 'adopt'; stream: PolledStream; id: number };

export interface WireError {
  code: string;
  message: string;
  retryable: boolean;
  context?: Record<string, unknown>;
}

/**
 * A batch's parsed records as they cross: their keys, and their texts joined into one string that
 * the main side slices (`ends[i]` is where text i ends). See joinTexts.
 */
export interface JoinedTexts {
  keys: string[];
  text: string;
  ends: number[];
}

export type ToMain =
  /** `spent`: the chunk's memory, given back for the next chunk (see list-worker.ts). */
  | { t: 'batch'; id: number; known: string[]; parsed: JoinedTexts; fresh?: FreshEntries; spent?: ArrayBuffer }
  | { t: 'done'; id: number; count: number }
  | { t: 'error'; id: number; error: WireError };

/**
 * Why one string per batch: each string a message carries is made anew on the receiving side, in the
 * young generation, so a first cycle's 300,000 record texts (~400 MB) were each copied once or twice
 * more by the daemon's scavenger as they joined the snapshot (~1 s of its garbage collection during
 * the read). A batch's one big string is allocated among the large objects, which are never copied;
 * its slices (`String#slice` of 13 characters or more makes a view, not a copy) are small.
 */
export function joinTexts(pairs: readonly string[]): JoinedTexts {
  const keys: string[] = [];
  const texts: string[] = [];
  const ends: number[] = [];
  let end = 0;
  for (let i = 0; i < pairs.length; i += 2) {
    keys.push(pairs[i] as string);
    const text = pairs[i + 1] as string;
    texts.push(text);
    ends.push((end += text.length));
  }
  return { keys, text: texts.join(''), ends };
}

/** The flat key, text pairs of a joined batch again, each text a slice of the batch's string. */
export function splitTexts(joined: JoinedTexts): string[] {
  const pairs: string[] = [];
  let start = 0;
  joined.keys.forEach((key, i) => {
    const end = joined.ends[i] as number;
    pairs.push(key, joined.text.slice(start, end));
    start = end;
  });
  return pairs;
}
