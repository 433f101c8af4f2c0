import { actionButton, cardTable, escape } from './html.js';
import { hasOwnUser, personNoun } from './names.js';
import type { RecordTrail, Subject } from './records.js';
import { OUTCOME_WORDS, STATE_WORDS, duration, localTime } from './words.js';

function origin(t: RecordTrail, timeZone: string): string {
  if (t.origin.kind === 'poll') return `found by the poll at ${localTime(t.origin.at, timeZone)}${t.origin.trigger ? ` (${t.origin.trigger})` : ''}`;
  if (t.origin.kind === 'webhook') {
    return `webhook ${t.origin.event} received at ${localTime(t.origin.at, timeZone)}, signature verified${t.origin.reprocessed ? `, re-sent ${t.origin.reprocessed}×` : ''}`;
  }
  return 'origin no longer on record';
}

function trail(t: RecordTrail, timeZone: string, actions: boolean): string {
  const connectors = t.connectors.map((c) => {
    const state = `<b class="state-${c.state}">${escape(STATE_WORDS[c.state])}</b>${c.nextRunAt !== undefined && c.state === 'retrying' ? ` · next try ${escape(localTime(c.nextRunAt, timeZone))}` : ''}`;
    const retry = actions && (c.state === 'dead' || c.state === 'retrying') ? ` ${actionButton('Retry now', '/admin/deliveries/retry', { id: `${c.connector}:${t.recordId}` })}` : '';
    const attempts = cardTable(
      ['time', 'outcome', 'status', 'took', 'error'],
      c.attempts.map((a) => [localTime(a.at, timeZone), OUTCOME_WORDS[a.outcome], a.httpStatus, duration(a.durationMs), a.error ?? '']),
      'no attempts on record',
    );
    return `<div class="connector-trail" data-connector="${escape(c.connector)}"><p>→ <b>${escape(c.connector)}</b>: ${state}${retry}</p>${attempts}</div>`;
  }).join('');
  return `<div class="trail" data-record="${escape(t.recordId)}"><p><b>${escape(t.label)}</b> <small class="muted">${escape(t.recordId)}</small><br>${escape(origin(t, timeZone))}</p>${connectors}</div>`;
}

export function renderRecords(found: { query: string; subjects: Subject[] }, timeZone: string, actions: boolean): string {
  if (found.query === '') return '';
  if (found.subjects.length === 0) return `<p class="muted" id="no-records">nothing found for “${escape(found.query)}”</p>`;
  return found.subjects.map((s) => {
    const title = s.kind === 'person'
      ? `${escape(s.name || '(no name)')} <small class="muted">${personNoun(s.stream)} ${s.key}${s.userId !== undefined && hasOwnUser(s.stream) ? ` · user ${s.userId}` : ''}${s.email ? ` · ${escape(s.email)}` : ''}</small>`
      : `${escape(s.event)} <small class="muted">received ${escape(localTime(s.receivedAt, timeZone))}</small>`;
    const records = s.records.length === 0 ? '<p class="muted">no changes delivered within the history kept</p>' : s.records.map((t) => trail(t, timeZone, actions)).join('');
    return `<section class="subject panel"><h3>${title}</h3>${records}</section>`;
  }).join('');
}
