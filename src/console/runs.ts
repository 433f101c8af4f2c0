import type { Run } from '../store/index.js';
import type { ConsoleSources } from './sources.js';
import { localDay } from './words.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Runs shown at most (a poll every minute makes 43,200 in 30 days; the page shows the latest). */
const RUNS_SHOWN = 200;

export interface RunsView {
  runs: Run[];
  /** Per local day of the last 30, oldest first: changes detected and deliveries done. */
  days: { day: string; changes: number; delivered: number; failed: number }[];
  /** The last 24 hours of webhook intake, per hour, oldest first: counts by outcome (`rejected:<reason>` …). */
  intake: { hour: number; counts: Record<string, number> }[];
}

export async function runsView(sources: ConsoleSources, days = 30): Promise<RunsView> {
  const now = sources.clock.now();
  const since = now - days * DAY_MS;
  const [runs, changes, deliveries, webhook] = await Promise.all([
    sources.store.history.runs({ since, limit: RUNS_SHOWN }),
    sources.store.history.tallies('change', since),
    sources.store.history.tallies('delivery', since),
    sources.store.history.tallies('webhook', now - 23 * HOUR_MS),
  ]);
  const byDay = new Map<string, RunsView['days'][number]>();
  for (let t = now - (days - 1) * DAY_MS; t <= now; t += DAY_MS) {
    const day = localDay(t, sources.timezone);
    byDay.set(day, { day, changes: 0, delivered: 0, failed: 0 });
  }
  for (const t of changes) {
    const day = byDay.get(localDay(t.hour, sources.timezone));
    if (day) day.changes += Number(t.n);
  }
  for (const t of deliveries) {
    const day = byDay.get(localDay(t.hour, sources.timezone));
    if (!day) continue;
    if (t.label.endsWith(':done')) day.delivered += Number(t.n);
    else day.failed += Number(t.n);
  }
  const first = Math.floor((now - 23 * HOUR_MS) / HOUR_MS) * HOUR_MS;
  const intake = Array.from({ length: 24 }, (_, i) => ({ hour: first + i * HOUR_MS, counts: {} as Record<string, number> }));
  for (const t of webhook) {
    const slot = intake[(t.hour - first) / HOUR_MS];
    if (slot) slot.counts[t.label] = (slot.counts[t.label] ?? 0) + Number(t.n);
  }
  return { runs, days: [...byDay.values()], intake };
}
