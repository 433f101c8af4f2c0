import { describe, expect, it, onTestFinished } from 'vitest';
import { systemClock } from '../../clock.js';
import { LOG_PARTS } from '../log-parts.js';
import type { OutboxCounts } from '../port.js';
import { openDatabase } from './handles.js';
import { operations, type OperationName } from './operations.js';
import { sqlitePortMethods } from './port-methods.js';
import { migrate } from './schema.js';
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

describe('sqlite inbox search', () => {
  /** The port's methods on a database in memory, each call run at once, and the calls made. */
  function onMemory(window: number) {
    const db = openDatabase(':memory:');
    migrate(db);
    const ops = operations({ id: 'me', host: 'h', pid: 1, startedAt: 0 });
    const calls: string[] = [];
    const call = (async (op: OperationName, ...args: unknown[]) => {
      calls.push(op);
      return (ops[op] as (db: unknown, ...a: unknown[]) => unknown)(db, ...args);
    }) as CallThread;
    return { methods: sqlitePortMethods(call, systemClock, () => undefined, window), calls, close: () => void db.close() };
  }
  const event = (id: string, at: number, text: string) => ({
    id, event: 'invoice.created', receivedAt: new Date(at).toISOString(), receivedAtMs: at,
    body: `{"event":"invoice.created","object":{"id":1,"description":"${text}"}}`, recordIds: [], reprocessed: 0,
  });

  it('reads a window of events per call, newest first, until enough are found or none is left', async () => {
    const { methods, calls, close } = onMemory(2);
    onTestFinished(close);
    // Three received in the same millisecond: the later stored counts as newer.
    const stored = [event('e1', 1, 'needle'), event('e2', 2, 'hay'), event('e3', 2, 'Needle'), event('e4', 2, 'needle'), event('e5', 3, 'hay'), event('e6', 4, 'hay'), event('e7', 5, 'a needle')];
    for (const e of stored) await methods.inbox.accept(e, []);
    calls.length = 0;
    expect((await methods.inbox.search(['needle'], 10)).map((e) => e.id)).toEqual(['e7', 'e4', 'e3', 'e1']);
    expect(calls).toEqual(['searchInbox', 'searchInbox', 'searchInbox', 'searchInbox']);
    calls.length = 0;
    // Enough found in the second window: the older ones are not read.
    expect((await methods.inbox.search(['needle'], 2)).map((e) => e.id)).toEqual(['e7', 'e4']);
    expect(calls).toEqual(['searchInbox', 'searchInbox']);
    calls.length = 0;
    expect(await methods.inbox.search(['nothing'], 10)).toEqual([]);
    expect(calls).toHaveLength(4);
    expect(await methods.inbox.search([''], 10)).toEqual([]);
    // A limit that is no whole number counts as the whole number below it, and none reads no window past the first.
    calls.length = 0;
    expect((await methods.inbox.search(['needle'], 1.5)).map((e) => e.id)).toEqual(['e7']);
    expect(calls).toEqual(['searchInbox']);
    calls.length = 0;
    expect(await methods.inbox.search(['needle'], 0)).toEqual([]);
    expect(calls).toEqual(['searchInbox']);
  });
});
