import { describe, expect, it } from 'vitest';
import { webhooksToday } from './status.js';

describe('webhooksToday', () => {
  it('adds the outcomes since the day began, a quarantined delivery once', () => {
    const hour = 3_600_000;
    const entries = [
      { kind: 'webhook', hour: 0, label: 'stored', n: 5 },
      { kind: 'webhook', hour, label: 'stored', n: 3 },
      { kind: 'webhook', hour, label: 'duplicate', n: 1 },
      { kind: 'webhook', hour, label: 'rejected:stale', n: 2 },
      { kind: 'webhook', hour, label: 'quarantined', n: 2 },
      { kind: 'webhook', hour: 2 * hour, label: 'rejected:mismatch', n: 1 },
      { kind: 'delivery', hour, label: 'files:done', n: 7 },
    ];
    expect(webhooksToday(entries, hour)).toEqual({ received: 7, rejected: 3 });
  });
});
