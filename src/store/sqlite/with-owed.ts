import type { OutboxCounts } from '../port.js';

/**
 * The outbox's counts per connector: those of the delivery rows and ranges, with what each part of
 * the delivery log owes (log.ts, owedCounts: one map per part) added to the depths.
 */
export function withOwed(rows: ReadonlyMap<string, OutboxCounts>, parts: readonly ReadonlyMap<string, number>[]): Map<string, OutboxCounts> {
  const out = new Map([...rows].map(([connector, c]) => [connector, { ...c }]));
  for (const part of parts) {
    for (const [connector, n] of part) {
      const c = out.get(connector) ?? { depth: 0, dead: 0 };
      c.depth += n;
      out.set(connector, c);
    }
  }
  return out;
}
