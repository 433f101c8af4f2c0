import { cardTable, TABLE_CSS } from '../console/html.js';
import { SHELL_CSS } from '../console/shell.js';
import type { ReadinessState } from '../readiness.js';
import type { ReplicaView } from './replicas.js';

/** Everything the status page shows. Nothing secret or personal: ids, counts, times and reasons. */
export interface StatusSnapshot {
  generatedAt: string;
  /** Times are shown in this zone (poll.timezone), as `YYYY-MM-DD HH:MM:SS`. */
  timeZone?: string;
  ready: boolean;
  readiness: Record<string, ReadinessState>;
  poll: { lastRunAt?: string; lastOutcome?: string; nextRunAt?: string; heldUntil?: string };
  export: { lastRunAt?: string; lastOutcome?: string; nextRunAt?: string };
  webhooks: { callbackUrl: string; state: string; registrations: { id: number; event: string }[] };
  events: { receivedToday: number; rejectedToday: number; quarantined: number };
  connectors: { name: string; type: string; streams: readonly string[]; queueDepth: number; dead: number; check: string }[];
  dead: { id: string; connector: string; attempts: number; lastError: string; at?: string }[];
  /** The live replicas on the store (one, on SQLite), and what each holds. */
  replicas: ReplicaView[];
}

const escape = (value: unknown): string =>
  String(value ?? '—').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const table = (head: string[], rows: (string | number | undefined)[][], empty: string) => cardTable(head, rows, empty);

/** An ISO time as local `YYYY-MM-DD HH:MM:SS` (short enough for a phone); anything else as it is. */
function localTime(value: string | undefined, timeZone: string | undefined): string | undefined {
  if (!value || !timeZone || !/^\d{4}-\d{2}-\d{2}T/.test(value)) return value;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  return new Intl.DateTimeFormat('sv-SE', { timeZone, dateStyle: 'short', timeStyle: 'medium' }).format(date);
}

/**
 * A plain server-rendered page (pure: snapshot in, HTML out). With the console (`consoleHtml`) its
 * script keeps the problems fresh and the page does not reload itself (a search or a token being
 * typed would be lost); without it, it reloads every 15 s.
 */
export function renderStatusPage(s: StatusSnapshot, consoleHtml = ''): string {
  const at = (value: string | undefined) => localTime(value, s.timeZone);
  const reasons = Object.entries(s.readiness).filter(([, state]) => !state.ok) as [string, { ok: false; reason: string }][];
  const queue = s.connectors.reduce((sum, c) => sum + c.queueDepth, 0);
  const dead = s.connectors.reduce((sum, c) => sum + c.dead, 0);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${consoleHtml ? '' : '<meta http-equiv="refresh" content="15">'}
<title>schoolbridge — ${s.ready ? 'ready' : 'not ready'}</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:960px;padding:12px;color:#1d2330;background:#f7f8fa}
h1{font-size:1.3rem;margin:.2rem 0}h2{font-size:1.05rem;margin:1.2rem 0 .4rem}
.badge{display:inline-block;padding:.15rem .6rem;border-radius:1rem;font-weight:600;color:#fff}
.ok{background:#1f8a4c}.bad{background:#c0392b}.muted{color:#6b7280}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:8px}
.card{background:#fff;border:1px solid #e3e6eb;border-radius:8px;padding:8px 10px}
.card b{display:block;font-size:1.15rem;overflow-wrap:anywhere}
${TABLE_CSS}${SHELL_CSS}
</style></head><body>
<h1>schoolbridge <span id="readiness" class="badge ${s.ready ? 'ok' : 'bad'}">${s.ready ? 'ready' : 'not ready'}</span></h1>
<p class="muted">as of ${escape(at(s.generatedAt))}${s.timeZone ? ` (${escape(s.timeZone)})` : ''} · ${consoleHtml ? 'problems refresh every 15 s' : 'refreshes every 15 s'}</p>
${reasons.length ? `<ul id="reasons">${reasons.map(([name, state]) => `<li><b>${escape(name)}</b>: ${escape(state.reason)}</li>`).join('')}</ul>` : ''}
<div class="cards">
<div class="card">last poll<b id="last-poll">${escape(at(s.poll.lastRunAt))}</b>${escape(s.poll.lastOutcome ?? '')}</div>
<div class="card">next poll<b id="next-poll">${escape(at(s.poll.nextRunAt))}</b>${s.poll.heldUntil ? `held until ${escape(at(s.poll.heldUntil))}, as the upstream asked` : ''}</div>
<div class="card">last roster export<b id="last-export">${escape(at(s.export.lastRunAt))}</b>next ${escape(at(s.export.nextRunAt))}</div>
<div class="card">queue depth<b id="queue-depth">${queue}</b></div>
<div class="card">dead deliveries<b id="dead-count">${dead}</b></div>
<div class="card">events today<b id="events-received">${s.events.receivedToday}</b>rejected <span id="events-rejected">${s.events.rejectedToday}</span> · quarantined <span id="events-quarantined">${s.events.quarantined}</span></div>
</div>
${consoleHtml}
<h2>Connectors</h2>
${table(['name', 'type', 'streams', 'queue', 'dead', 'check'], s.connectors.map((c) => [c.name, c.type, c.streams.join(', '), c.queueDepth, c.dead, c.check]), 'no connectors configured')}
<h2>Webhook registrations</h2>
<p class="muted">callback ${escape(s.webhooks.callbackUrl)} · ${escape(s.webhooks.state)}</p>
${table(['id', 'event'], s.webhooks.registrations.map((r) => [r.id, r.event]), 'none known')}
<h2>Replicas</h2>
${table(['replica', 'host', 'started', 'last heartbeat', 'holds', 'last ticks'], s.replicas.map((r) => [
    `${r.id.slice(0, 8)}${r.self ? ' (this one)' : ''}`, `${r.host} · pid ${r.pid}`, at(r.startedAt), at(r.heartbeatAt), r.roles.join(', ') || '—',
    Object.entries(r.lastTicks).map(([job, slot]) => `${job} ${at(slot)}`).join(', ') || '—',
  ]), 'none live (the store cannot be read)')}
<h2>Dead deliveries</h2>
${table(['id', 'connector', 'attempts', 'last error', 'since'], s.dead.map((d) => [d.id, d.connector, d.attempts, d.lastError.slice(0, 200), at(d.at)]), 'none')}
</body></html>
`;
}
