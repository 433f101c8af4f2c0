import type { ChangeRecord } from '../records.js';
import type { PolledStreamName } from '../streams/index.js';
import type { CycleResult, StreamSummary } from './cycle.js';

/** The cycle's streams with their summaries, in the order it polled them. */
export const summaries = (result: Pick<CycleResult, 'streams'>) => Object.entries(result.streams) as [PolledStreamName, StreamSummary][];

/** A cycle that failed before it read anything (another one running, the store out) has no counts to show. */
function readNothing(result: CycleResult): boolean {
  return result.outcome !== 'ok' && summaries(result).every(([, s]) => s.fetched + s.created + s.updated + s.deleted + s.baselined === 0);
}

/** Human-readable lines for `schoolbridge sync` (the --json output is the result itself). */
export function formatCycle(result: CycleResult): string {
  const nothing = readNothing(result);
  const lines = nothing ? [] : summaries(result).map(([stream, s]) => {
    const baseline = s.baselined > 0 ? `, ${s.baselined} recorded silently (baseline)` : '';
    return `${stream}: ${s.fetched} fetched, ${s.created} created, ${s.updated} updated, ${s.deleted} deleted${baseline}`;
  });
  const head = result.dryRun
    ? `dry run${result.outcome === 'ok' ? '' : ` ${result.outcome}`} (nothing written or delivered)`
    : `poll cycle ${result.outcome}`;
  if (refusedForAnother(result)) return `${result.dryRun ? 'dry run' : 'poll cycle'} not run: ${result.message ?? result.reason}`;
  const { readMs, checkMs, commitMs } = result.phases ?? {};
  const phases = readMs === undefined ? '' : ` (read and diff ${readMs} ms${checkMs === undefined ? '' : `, checks ${checkMs} ms`}${commitMs === undefined ? '' : `, commit ${commitMs} ms`})`;
  // A cycle that stopped early counted only what it had read and diffed by then.
  const partial = result.outcome === 'ok' || nothing ? [] : ['(counts up to where it stopped)'];
  // The time before the reason: a reason may end in advice ("try again when it is done").
  const first = result.outcome === 'ok' ? `${head} in ${result.durationMs} ms${phases}` : `${head} after ${result.durationMs} ms${phases}: ${result.message ?? result.reason}`;
  return [first, ...lines, ...partial].join('\n');
}

/** A cycle refused because another process runs one on the same database: nothing of it ran. */
export function refusedForAnother(result: Pick<CycleResult, 'outcome' | 'reason'>): boolean {
  return result.outcome === 'failed' && result.reason === 'poll.busy';
}

/** One line for a log: the outcome, the time, and per stream what was fetched and what changed. */
export function cycleLine(result: CycleResult): string {
  const streams = readNothing(result) ? [] : summaries(result).map(([stream, s]) => {
    const changes = [['created', s.created], ['updated', s.updated], ['deleted', s.deleted], ['recorded silently', s.baselined]]
      .filter(([, n]) => (n as number) > 0)
      .map(([what, n]) => `${n} ${what}`);
    return `${stream} ${s.fetched} (${changes.length > 0 ? changes.join(', ') : 'no change'})`;
  });
  const seconds = (result.durationMs / 1000).toFixed(1);
  if (refusedForAnother(result)) return `poll ${result.dryRun ? 'dry run' : 'cycle'} not run: ${result.message ?? result.reason}`;
  if (result.outcome !== 'ok') {
    return `poll ${result.dryRun ? 'dry run' : 'cycle'} ${result.outcome} after ${seconds} s: ${result.message ?? result.reason}${streams.length > 0 ? `; ${streams.join(', ')}` : ''}`;
  }
  const head = result.dryRun ? 'poll dry run' : 'poll cycle done';
  return `${head} in ${seconds} s${streams.length > 0 ? `: ${streams.join(', ')}` : ''}`;
}

export function formatChange(change: ChangeRecord): string {
  const head = `${change.stream} ${change.op} ${change.key}`;
  if (change.op !== 'updated') return head;
  const fields = change.changes.map((c) => `  ${c.path}: ${show(c, 'from')} → ${show(c, 'to')}`);
  return [head, ...fields].join('\n');
}

function show(change: object, side: 'from' | 'to'): string {
  return side in change ? JSON.stringify((change as Record<string, unknown>)[side]) : '(absent)';
}

/**
 * `sync --json`: JSON.stringify(result, null, 2) (with `changes` last), in pieces, a change at a
 * time. A dry run of a first cycle carries every record as a change (300,000 at 100,000 students,
 * ~500 MB of text): made as one string it passed V8's limit for a string, and the command failed.
 */
export function* cycleJson(result: object & { changes?: readonly ChangeRecord[] | undefined }): Generator<string> {
  const { changes, ...rest } = result;
  if (changes === undefined) {
    yield `${JSON.stringify(rest, null, 2)}\n`;
    return;
  }
  const empty = JSON.stringify({ ...rest, changes: [] }, null, 2);
  if (changes.length === 0) {
    yield `${empty}\n`;
    return;
  }
  // `empty` ends with the empty array and the closing brace; the array is written out instead.
  yield `${empty.slice(0, -'[]\n}'.length)}[\n`;
  for (let i = 0; i < changes.length; i++) {
    yield `    ${JSON.stringify(changes[i], null, 2).replaceAll('\n', '\n    ')}${i < changes.length - 1 ? ',' : ''}\n`;
  }
  yield '  ]\n}\n';
}
