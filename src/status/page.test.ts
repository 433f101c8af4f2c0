import { describe, expect, it } from 'vitest';
import { renderStatusPage, type StatusSnapshot } from './page.js';

function snapshot(overrides: Partial<StatusSnapshot> = {}): StatusSnapshot {
  return {
    generatedAt: '2026-11-22T10:00:00.000Z',
    ready: true,
    readiness: { store: { ok: true } },
    poll: { lastRunAt: '2026-11-22T09:59:00.000Z', lastOutcome: 'ok', nextRunAt: '2026-11-22T10:00:00.000Z' },
    export: {},
    webhooks: { callbackUrl: 'http://127.0.0.1:8080/webhooks/v2', state: 'converged', registrations: [{ id: 7, event: 'invoice.created' }] },
    events: { receivedToday: 12, rejectedToday: 2, quarantined: 1 },
    connectors: [{ name: 'files', type: 'file', streams: ['students'], queueDepth: 3, dead: 1, check: 'ok' }],
    dead: [{ id: 'files:invoices:x', connector: 'files', attempts: 4, lastError: 'http 400: <script>alert(1)</script>' }],
    replicas: [
      { id: '7c1e2f3a-0000', host: 'node-a', pid: 11, startedAt: '2026-11-22T08:00:00.000Z', heartbeatAt: '2026-11-22T09:59:58.000Z', self: true, roles: ['connector:files'], lastTicks: { poll: '2026-11-22T09:55:00.000Z' } },
      { id: '9d00aa11-0000', host: 'node-b', pid: 12, startedAt: '2026-11-22T08:00:01.000Z', heartbeatAt: '2026-11-22T09:59:57.000Z', self: false, roles: ['webhooks.reconcile'], lastTicks: {} },
    ],
    ...overrides,
  };
}

describe('renderStatusPage', () => {
  it('shows the key figures', () => {
    const html = renderStatusPage(snapshot());
    expect(html).toContain('<span id="readiness" class="badge ok">ready</span>');
    expect(html).toContain('<b id="queue-depth">3</b>');
    expect(html).toContain('<b id="dead-count">1</b>');
    expect(html).toContain('<b id="events-received">12</b>');
    expect(html).toContain('invoice.created');
    expect(html).toContain('http-equiv="refresh"');
  });

  it('shows times in the timezone of the school', () => {
    const html = renderStatusPage(snapshot({ timeZone: 'Europe/Warsaw' }));
    expect(html).toContain('<b id="last-poll">2026-11-22 10:59:00</b>');
  });

  it('says when scheduled polls wait as the upstream asked', () => {
    const html = renderStatusPage(snapshot({ timeZone: 'Europe/Warsaw', poll: { nextRunAt: '2026-11-22T10:00:00.000Z', heldUntil: '2026-11-22T11:00:00.000Z' } }));
    expect(html).toContain('<b id="next-poll">2026-11-22 11:00:00</b>held until 2026-11-22 12:00:00, as the upstream asked</div>');
    expect(renderStatusPage(snapshot())).not.toContain('held until');
  });

  it('escapes what it shows', () => {
    const html = renderStatusPage(snapshot());
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;');
  });

  it('lists readiness reasons when not ready', () => {
    const html = renderStatusPage(snapshot({ ready: false, readiness: { poll: { ok: false, reason: 'mass delete guard: 40% of students' } } }));
    expect(html).toContain('not ready');
    expect(html).toContain('mass delete guard: 40% of students');
  });

  it('lists the live replicas and what each holds', () => {
    const html = renderStatusPage(snapshot({ timeZone: 'Europe/Warsaw' }));
    expect(html).toContain('7c1e2f3a (this one)');
    expect(html).toContain('connector:files');
    expect(html).toContain('webhooks.reconcile');
    expect(html).toContain('poll 2026-11-22 10:55:00');
    expect(html).toContain('node-b · pid 12');
  });
});
