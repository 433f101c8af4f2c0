import type { Clock } from '../src/clock.js';
import type { StoredRecord } from '../src/connectors/stored-record.js';
import type { Connector, DeliveryOutcome } from '../src/connectors/types.js';
import type { ChangeRecord, RosterRecord } from '../src/records.js';
import type { Outbox, OutboxEvent, OutboxEventPayload } from '../src/outbox/index.js';

/** A clock that moves only when told; sleeps resolve when `advance` passes their time (a sleep already due ends on the next turn). */
export class ManualClock implements Clock {
  private timers: { at: number; seq: number; resolve: () => void }[] = [];
  private seq = 0;

  constructor(private t = Date.parse('2026-11-22T10:00:00Z')) {}

  now(): number {
    return this.t;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = { at: this.t + Math.max(0, ms), seq: this.seq++, resolve: () => resolve() };
      this.timers.push(timer);
      // A sleep whose time has come (a wake-up computed from a reading the clock has since passed)
      // ends on the next turn, as a real timer of 0 ms would, not at some later advance.
      if (ms <= 0) setImmediate(() => this.advance(0));
      signal?.addEventListener(
        'abort',
        () => {
          this.timers = this.timers.filter((t) => t !== timer);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  }

  /** Moves time forward, firing due sleeps in time order. */
  advance(ms: number): void {
    this.t += ms;
    const due = this.timers.filter((t) => t.at <= this.t).sort((a, b) => a.at - b.at || a.seq - b.seq);
    this.timers = this.timers.filter((t) => t.at > this.t);
    for (const timer of due) timer.resolve();
  }

  get pending(): number {
    return this.timers.length;
  }
}

let counter = 0;

export function change(stream: 'students' | 'users', key: number, op: ChangeRecord['op'] = 'updated', n = ++counter): ChangeRecord {
  return {
    id: `${stream}:${key}:${String(n).padStart(12, '0')}`,
    stream,
    op,
    key,
    detectedAt: new Date(Date.UTC(2026, 10, 22, 10, 0, 0, n)).toISOString(),
    changes: [{ path: 'user.lastName', from: 'Kowalska', to: `Nowak ${n}` }],
    record: { id: key, user: { lastName: `Nowak ${n}` } },
    previous: { id: key, user: { lastName: 'Kowalska' } },
  };
}

export function roster(date: string, rows: RosterRecord['rows'] = []): RosterRecord {
  return { id: `roster:${date}:${rows.length}`, stream: 'roster', key: date, date, generatedAt: `${date}T02:00:00.000Z`, rows };
}

export type Script = (record: StoredRecord, attempt: number) => DeliveryOutcome | Promise<DeliveryOutcome>;

/** A connector whose answers a test scripts; it records every call and every record it was handed. */
export function scriptedConnector(script: Script = () => ({ status: 'done' }), batchSize = 1) {
  const calls: string[][] = [];
  const received: StoredRecord[] = [];
  const attempts = new Map<string, number>();
  const connector: Connector = {
    type: 'scripted',
    configSchema: undefined as never,
    batchSize: () => batchSize,
    check: async () => ({ ok: true }),
    async deliver(_ctx, records) {
      calls.push(records.map((r) => r.id));
      received.push(...records);
      return Promise.all(
        records.map((r) => {
          const attempt = (attempts.get(r.id) ?? 0) + 1;
          attempts.set(r.id, attempt);
          return script(r, attempt);
        }),
      );
    },
  };
  return { connector, calls, received, delivered: () => calls.flat() };
}

/** Resolves with the next event of that kind (matching `filter`). */
export function nextEvent(outbox: Outbox, event: OutboxEvent, filter: (p: OutboxEventPayload) => boolean = () => true): Promise<OutboxEventPayload> {
  return new Promise((resolve) => {
    const off = outbox.on(event, (payload) => {
      if (!filter(payload)) return;
      off();
      resolve(payload);
    });
  });
}
