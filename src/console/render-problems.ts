import { actionButton, cardTable, escape } from './html.js';
import type { Problems } from './problems.js';
import { localTime } from './words.js';

/** Problems first: what failed for good (grouped), what is retrying, connector checks, quarantine. */
export function renderProblems(p: Problems, timeZone: string, actions: boolean): string {
  const at = (ms: number | undefined) => localTime(ms, timeZone);
  const badge = `<p><span id="console-badge" class="badge ${p.badge === 'red' ? 'bad' : 'ok'}">${p.badge === 'red' ? 'needs attention' : 'all good'}</span></p>`;
  const reasons = p.reasons.length ? `<ul id="problem-reasons">${p.reasons.map((r) => `<li>${escape(r)}</li>`).join('')}</ul>` : '';
  const dead = cardTable(
    ['connector', 'error', 'records', 'who', 'since', ''],
    p.dead.map((g) => [
      g.connector,
      { html: `${escape(g.error || 'error')}${g.sample ? `<br><small class="muted">${escape(g.sample.slice(0, 300))}</small>` : ''}` },
      g.count,
      g.names.join(', ') + (g.count > g.names.length ? ', …' : ''),
      at(g.since),
      { html: actions ? actionButton('Retry these', '/admin/deliveries/retry', { group: { connector: g.connector, error: g.error } }) : '' },
    ]),
    'nothing failed for good',
    'dead-groups',
  );
  const retrying = cardTable(
    ['connector', 'waiting to retry', 'last error', 'last try', 'next try'],
    p.retrying.map((r) => [r.connector, r.count, r.lastError, at(r.lastAttemptAt), at(r.nextRunAt)]),
    'no connector is retrying',
    'retrying',
  );
  const checks = cardTable(['connector', 'last check'], p.checks.map((c) => [c.connector, c.ok ? 'ok' : `failing: ${c.reason}`]), 'no connectors', 'checks');
  const quarantine = p.quarantined.length === 0 ? '' : `<h3>Held deliveries (signed, but outside the time window)</h3>${cardTable(
    ['event', 'why', 'received', ''],
    p.quarantined.map((q) => [q.event, q.reason === 'stale' ? 'too old' : 'from the future', at(Date.parse(q.receivedAt)),
      { html: actions ? actionButton('Release', '/admin/events/quarantine/release', { id: q.id }) : '' }]),
    '', 'quarantine',
  )}`;
  return `${badge}${reasons}<h3>Failed for good — needs you${p.deadCut ? ' (first 10,000)' : ''}</h3>${dead}<h3>Waiting to retry</h3>${retrying}<h3>Connector checks</h3>${checks}${quarantine}`;
}
