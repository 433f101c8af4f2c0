import type { StoredRecord } from '../../src/connectors/stored-record.js';
import type { Connector, DeliveryOutcome } from '../../src/connectors/types.js';
import type { ChangeRecord, RosterRecord } from '../../src/records.js';
import type { Outbox, OutboxEvent, OutboxEventPayload } from '../../src/outbox/index.js';

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
