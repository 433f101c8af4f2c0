import { cardTable, escape } from './html.js';
import type { RunsView } from './runs.js';
import { duration, localHour, localTime } from './words.js';

/** Bars of changes (blue) and deliveries (green) per day, one small inline SVG; scales to its box. */
export function dayChart(days: RunsView['days']): string {
  const max = Math.max(1, ...days.map((d) => Math.max(d.changes, d.delivered)));
  const w = 10;
  const h = 60;
  const bars = days.map((d, i) => {
    const c = (d.changes / max) * h;
    const s = (d.delivered / max) * h;
    return `<g><title>${escape(`${d.day}: ${d.changes} changes, ${d.delivered} delivered, ${d.failed} failed attempts`)}</title>`
      + `<rect x="${i * w + 1}" y="${(h - c).toFixed(1)}" width="4" height="${c.toFixed(1)}" fill="#3b6fd8"/>`
      + `<rect x="${i * w + 5}" y="${(h - s).toFixed(1)}" width="4" height="${s.toFixed(1)}" fill="#1f8a4c"/></g>`;
  }).join('');
  return `<svg id="day-chart" viewBox="0 0 ${days.length * w} ${h}" preserveAspectRatio="none" role="img" aria-label="changes and deliveries per day" style="width:100%;height:80px;background:#fff">${bars}</svg>`
    + `<p class="muted"><span style="color:#3b6fd8">■</span> changes found · <span style="color:#1f8a4c">■</span> delivered · ${escape(days[0]?.day ?? '')} to ${escape(days.at(-1)?.day ?? '')}</p>`;
}

const OUTCOME = { ok: 'ok', aborted: 'stopped (safety check)', failed: 'failed' } as const;

function counts(run: RunsView['runs'][number]): string {
  return Object.entries(run.counts).map(([stream, ops]) => `${stream}: ${Object.entries(ops).filter(([, n]) => n > 0).map(([op, n]) => `${n} ${op}`).join(', ') || 'no changes'}`).join('; ');
}

export function renderRuns(v: RunsView, timeZone: string): string {
  const runs = cardTable(
    ['when', 'what', 'started by', 'took', 'outcome', 'counts'],
    v.runs.slice(0, 50).map((r) => [localTime(r.startedAt, timeZone), r.kind === 'poll' ? 'poll' : 'roster export', r.trigger, duration(r.durationMs),
      `${OUTCOME[r.outcome]}${r.reason ? ` — ${r.reason}` : ''}`, counts(r)]),
    'no runs in the last 30 days',
    'runs',
  );
  const intake = cardTable(
    ['hour', 'stored', 'duplicates', 'rejected', 'held'],
    v.intake.filter((h) => Object.keys(h.counts).length > 0).reverse().map((h) => {
      const rejected = Object.entries(h.counts).filter(([k]) => k.startsWith('rejected:')).map(([k, n]) => `${n} ${k.slice(9)}`).join(', ');
      return [`${localHour(h.hour, timeZone)}:00`, h.counts.stored ?? 0, h.counts.duplicate ?? 0, rejected || 0, h.counts.quarantined ?? 0];
    }),
    'no webhook deliveries in the last 24 hours',
    'intake',
  );
  return `<h3>Last 30 days</h3>${dayChart(v.days)}<h3>Webhook deliveries, last 24 hours</h3>${intake}<h3>Runs (latest 50)</h3>${runs}`;
}
