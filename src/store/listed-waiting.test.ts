import { describe, expect, it } from 'vitest';
import { markWaiting } from './listed-waiting.js';
import type { ListedDelivery } from './port-outbox.js';

const delivery = (id: string, orderKey: string, extra: Partial<ListedDelivery> = {}): ListedDelivery => ({
  id, connector: id.split(':')[0]!, recordId: id, stream: 'events', orderKey, seq: 1, status: 'pending', enqueuedAt: 0, runAt: 0, attempts: 0, fence: 0, ...extra,
});
const log = { part: 0, seq: 1 };

describe('markWaiting', () => {
  it('names the first listed delivery of the key for each later log record not in flight', () => {
    const listed = markWaiting([
      delivery('a:1', 'k:1', { status: 'active', log }),
      delivery('a:2', 'k:2', { log }),
      delivery('a:3', 'k:1', { log }),
      delivery('a:4', 'k:1', { log }),
    ]);
    expect(listed.map((d) => d.waitingFor)).toEqual([undefined, undefined, 'a:1', 'a:1']);
  });

  it('marks a log record behind a dead or waiting row of its key, but never a row, nor across connectors', () => {
    const listed = markWaiting([
      delivery('a:1', 'k:1', { status: 'dead' }),
      delivery('a:2', 'k:1', { log }),
      delivery('b:3', 'k:1', { log }),
      delivery('b:4', 'k:1'),
      delivery('b:5', 'k:1', { waitingFor: 'b:0', log }),
      delivery('b:6', 'k:1', { status: 'active', log }),
    ]);
    expect(listed.map((d) => d.waitingFor)).toEqual([undefined, 'a:1', undefined, undefined, 'b:0', undefined]);
  });
});
