import { describe, expect, it } from 'vitest';
import { cardTable } from './html.js';
import type { Problems } from './problems.js';
import { renderProblems } from './render-problems.js';
import { renderRecords } from './render-records.js';
import { dayChart } from './render-runs.js';
import { renderShell } from './shell.js';
import { localTime } from './words.js';

const problems = (over: Partial<Problems> = {}): Problems => ({
  badge: 'red', reasons: ['3 deliveries failed for good'], deadCut: false, retrying: [], checks: [{ connector: 'hook', ok: true }], quarantined: [],
  dead: [{ connector: 'hook', error: 'webhook.rejected (HTTP 422)', count: 3, ids: ['hook:a'], names: ['Anna <b>Nowak</b> (student 1)'] }],
  ...over,
});

describe('the console\'s HTML', () => {
  it('labels every cell with its column, for the phone layout, and escapes what it shows', () => {
    const html = cardTable(['who', 'what'], [['<script>', { html: '<i>x</i>' }]], 'none');
    expect(html).toContain('<td data-label="who">&lt;script&gt;</td><td data-label="what"><i>x</i></td>');
    expect(cardTable(['a'], [], 'nothing here')).toBe('<p class="muted">nothing here</p>');
  });

  it('words problems plainly, and offers a retry of a group only when actions exist', () => {
    const withActions = renderProblems(problems(), 'Europe/Warsaw', true);
    expect(withActions).toContain('needs attention');
    expect(withActions).toContain('Failed for good — needs you');
    expect(withActions).toContain('Anna &lt;b&gt;Nowak&lt;/b&gt; (student 1), …');
    expect(withActions).toContain('data-body="{&quot;group&quot;:{&quot;connector&quot;:&quot;hook&quot;,&quot;error&quot;:&quot;webhook.rejected (HTTP 422)&quot;}}"');
    expect(renderProblems(problems(), 'Europe/Warsaw', false)).not.toContain('button');
    expect(renderProblems(problems({ badge: 'green', reasons: [], dead: [] }), 'UTC', true)).toContain('all good');
  });

  it('lists deliveries held in quarantine with a release button, and retrying connectors with their next try', () => {
    const html = renderProblems(problems({
      quarantined: [{ id: 'invoice.created:5:abc', event: 'invoice.created', reason: 'stale', receivedAt: '2026-11-22T10:00:00.000Z' }],
      retrying: [{ connector: 'books', count: 2, nextRunAt: Date.parse('2026-11-22T10:05:00Z'), lastError: 'accounting.unavailable (HTTP 503)' }],
    }), 'Europe/Warsaw', true);
    expect(html).toContain('too old');
    expect(html).toContain('data-path="/admin/events/quarantine/release" data-body="{&quot;id&quot;:&quot;invoice.created:5:abc&quot;}"');
    expect(html).toContain('<td data-label="next try">2026-11-22 11:05:00</td>');
  });

  it('shows times in the school\'s zone', () => {
    expect(localTime(Date.parse('2026-11-22T10:00:00Z'), 'Europe/Warsaw')).toBe('2026-11-22 11:00:00');
    expect(localTime(undefined, 'Europe/Warsaw')).toBe('—');
  });

  it('draws a bar pair per day, scaled to the busiest', () => {
    const svg = dayChart([{ day: '2026-11-21', changes: 0, delivered: 0, failed: 0 }, { day: '2026-11-22', changes: 10, delivered: 5, failed: 1 }]);
    expect(svg.match(/<rect /g)).toHaveLength(4);
    expect(svg).toContain('height="60.0"');
    expect(svg).toContain('2026-11-22: 10 changes, 5 delivered, 1 failed attempts');
  });

  it('shows a record\'s trail in words, with its origin and each attempt', () => {
    const html = renderRecords({
      query: 'anna',
      subjects: [{
        kind: 'person', stream: 'students', key: 1, name: 'Anna Nowak', email: 'anna@example.com', records: [{
          recordId: 'students:1:abc', label: 'student 1', origin: { kind: 'poll', at: Date.parse('2026-11-22T10:00:00Z'), trigger: 'schedule' },
          connectors: [{ connector: 'hook', state: 'retrying', nextRunAt: Date.parse('2026-11-22T10:05:00Z'), attempts: [{ at: Date.parse('2026-11-22T10:00:01Z'), outcome: 'retry', httpStatus: 503, durationMs: 20, error: 'webhook.unavailable (HTTP 503)' }] }],
        }],
      }],
    }, 'Europe/Warsaw', true);
    expect(html).toContain('found by the poll at 2026-11-22 11:00:00 (schedule)');
    expect(html).toContain('waiting to retry');
    expect(html).toContain('next try 2026-11-22 11:05:00');
    expect(html).toContain('failed, will retry');
    expect(html).toContain('Retry now');
    expect(renderRecords({ query: 'x', subjects: [] }, 'UTC', true)).toContain('nothing found');
  });

  it('asks for the token when the console is locked, and says how to enable actions when there is none', () => {
    expect(renderShell({ actions: true })).toContain('<form id="token-form" class="row">');
    expect(renderShell({ actions: true, rendered: { problems: 'P', runs: 'R' } })).toContain('<form id="token-form" class="row" hidden>');
    const readOnly = renderShell({ actions: false, rendered: { problems: 'P', runs: 'R' } });
    expect(readOnly).toContain('id="actions-off"');
    expect(readOnly).not.toContain('Sync now');
    expect(readOnly).not.toContain('cookie');
  });
});
