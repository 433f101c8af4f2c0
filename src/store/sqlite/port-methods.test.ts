import { describe, expect, it } from 'vitest';
import { systemClock } from '../../clock.js';
import { LOG_PARTS } from '../log-parts.js';
import type { OutboxCounts } from '../port.js';
import { sqlitePortMethods } from './port-methods.js';
import type { CallThread } from './thread-client.js';

describe('sqlite port methods', () => {
  it('count each part of the log in a call of its own, then the rows, and add them up', async () => {
    const calls: string[] = [];
    const call = (async (op: string, ...args: unknown[]) => {
      calls.push(args.length > 0 ? `${op} ${String(args[0])}` : op);
      if (op === 'rowCounts') return new Map<string, OutboxCounts>([['a', { depth: 2, dead: 1 }]]);
      return new Map(args[0] === 3 ? [['a', 5], ['b', 1]] : []);
    }) as CallThread;
    const counts = await sqlitePortMethods(call, systemClock, () => undefined).outbox.counts();
    // A log record only ever becomes a row: the rows counted last, a record that moved meanwhile is never missed.
    expect(calls).toEqual([...Array.from({ length: LOG_PARTS }, (_, part) => `owedCounts ${part}`), 'rowCounts']);
    expect(counts).toEqual(new Map([['a', { depth: 7, dead: 1 }], ['b', { depth: 1, dead: 0 }]]));
  });
});
