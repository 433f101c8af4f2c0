import type { ChangeRecord } from '../records.js';
import type { CycleResult } from './cycle.js';
import { POLLED_STREAMS } from './snapshot.js';

/** Human-readable lines for `schoolbridge sync` (the --json output is the result itself). */
export function formatCycle(result: CycleResult): string {
  const lines = POLLED_STREAMS.map((stream) => {
    const s = result.streams[stream];
    const baseline = s.baselined > 0 ? `, ${s.baselined} recorded silently (baseline)` : '';
    return `${stream}: ${s.fetched} fetched, ${s.created} created, ${s.updated} updated, ${s.deleted} deleted${baseline}`;
  });
  const head = result.dryRun ? 'dry run (nothing written or delivered)' : `poll cycle ${result.outcome}`;
  const why = result.outcome === 'ok' ? '' : `: ${result.message ?? result.reason}`;
  const { readMs, checkMs, commitMs } = result.phases ?? {};
  const phases = readMs === undefined ? '' : ` (read and diff ${readMs} ms${checkMs === undefined ? '' : `, checks ${checkMs} ms`}${commitMs === undefined ? '' : `, commit ${commitMs} ms`})`;
  return [`${head}${why} in ${result.durationMs} ms${phases}`, ...lines].join('\n');
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
