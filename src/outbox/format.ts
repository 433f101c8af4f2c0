import type { ListedDelivery } from '../store/index.js';
import type { OwedRange } from './owed-ranges.js';

/**
 * `deliveries list` as a terminal table; one line per entry, errors cut to keep lines readable, and
 * a line per connector and stream for what a first cycle's ranges owe (counted, not listed).
 */
export function formatDeliveries(entries: readonly ListedDelivery[], now: number, owed: readonly OwedRange[] = []): string {
  const owedLines = owed.map((o) => `owed       ${o.remaining} created ${o.remaining === 1 ? 'change' : 'changes'} of ${o.stream} to ${o.connector} from a first cycle, in key order (not listed one by one)` +
    `${o.attempts > 0 ? `; its next batch ${when(o.runAt, now)} after ${o.attempts} ${o.attempts === 1 ? 'attempt' : 'attempts'}${o.lastError ? `: ${oneLine(o.lastError)}` : ''}` : ''}\n`).join('');
  if (entries.length === 0) return owed.length > 0 ? owedLines : 'no deliveries\n';
  const rows = entries.map((e) => [
    e.id,
    inFlight(e, now) ? 'in-flight' : e.status,
    String(e.attempts),
    e.status === 'dead' || inFlight(e, now) ? '-' : e.waitingFor ? `after ${e.waitingFor}` : when(e.runAt, now),
    oneLine(e.lastError ?? ''),
  ]);
  const header = ['ID', 'STATE', 'ATTEMPTS', 'NEXT', 'LAST ERROR'];
  const widths = header.map((h, i) => Math.min(60, Math.max(h.length, ...rows.map((r) => r[i]!.length))));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
  const dead = entries.filter((e) => e.status === 'dead').length;
  const summary = `${entries.length} ${entries.length === 1 ? 'delivery' : 'deliveries'}${dead ? ` (${dead} dead; retry with: schoolbridge deliveries retry <id> | --all-dead)` : ''}`;
  return `${[line(header), ...rows.map(line)].join('\n')}\n${owedLines}${summary}\n`;
}

/** Leased to a replica now: its attempt is running, and its outcome decides what comes next. */
function inFlight(e: ListedDelivery, now: number): boolean {
  return e.status === 'active' || (e.status !== 'dead' && e.leaseUntil !== undefined && e.leaseUntil > now);
}

function when(runAt: number, now: number): string {
  return runAt <= now ? 'now' : new Date(runAt).toISOString();
}

function oneLine(text: string): string {
  const flat = printable(text.replace(/\s+/g, ' '));
  return flat.length > 120 ? `${flat.slice(0, 119)}…` : flat;
}

/**
 * The text with control characters shown as escapes: an error quotes what a receiver answered, and
 * its escape sequences must not reach the operator's terminal (colours, a cleared screen, a title).
 */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
