/** Builders for Google Sheets connector tests: a connector context and valid records, one change at a time. */
import pino from 'pino';
import { Registry } from 'prom-client';
import { Agent } from 'undici';
import { systemClock, type Clock } from '../../src/clock.js';
import type { ConnectorContext } from '../../src/connectors/types.js';
import type { ChangeRecord, EventRecord, RosterRecord, RosterRow } from '../../src/records.js';
import { googleSheetsConfigSchema, type GoogleSheetsConfig } from '../../connectors/google-sheets/schema.js';

export function sheetsContext(config: Record<string, unknown>, options: { clock?: Clock; signal?: AbortSignal; dispatcher?: Agent } = {}) {
  const parsed: GoogleSheetsConfig = googleSheetsConfigSchema.parse({ name: 'sheets', type: 'google-sheets', streams: ['students', 'users', 'invoices', 'events', 'roster'], ...config });
  const dispatcher = options.dispatcher ?? new Agent();
  const ctx: ConnectorContext<GoogleSheetsConfig> = {
    config: parsed,
    dispatcher,
    clock: options.clock ?? systemClock,
    log: pino({ level: 'silent' }),
    signal: options.signal ?? new AbortController().signal,
    metrics: new Registry(),
    cache: new Map(),
  };
  return { ctx, close: () => dispatcher.close() };
}

export function student(id: number, firstName = `Ann${id}`, extra: Record<string, unknown> = {}) {
  return {
    id, isAdult: 1, isActive: 1, createdAt: '2026-01-01 10:00:00', updatedAt: '2026-01-02 10:00:00',
    user: {
      id: 1000 + id, login: `s${id}`, firstName, lastName: 'Nowak', isArchived: 0, language: 'pl_PL',
      additionalData: { email: `s${id}@example.com`, phone: '00123', mobile: null, zipCode: '01-123 ', city: 'Warszawa', pesel: '90010112345', billingNipNumber: '123' },
      parentUser: { id: 5000 + id, firstName: null, lastName: null, additionalData: { email: null, phone: null } },
    },
    ...extra,
  };
}

let seq = 0;
export function change(key: number, op: ChangeRecord['op'], record: Record<string, unknown> | null, detectedAt = new Date(Date.UTC(2026, 0, 1, 0, 0, ++seq)).toISOString()): ChangeRecord {
  return { id: `students:${key}:${op}:${detectedAt}`, stream: 'students', op, key, detectedAt, changes: [], record, previous: null };
}

export function invoiceEvent(id: number, event = 'invoice.created', extra: Record<string, unknown> = {}): EventRecord {
  return {
    id: `invoices:${id}:${event}:${JSON.stringify(extra)}`, stream: 'invoices', event, key: id, receivedAt: new Date(Date.UTC(2026, 0, 2, 0, 0, ++seq)).toISOString(),
    record: { id, numberId: id * 10, userId: 7, date: '2026-01-02 00:00:00', statusOfficeName: 'new', description: '=HYPERLINK("x")', ...extra },
  };
}

export function rosterRow(i: number): RosterRow {
  return {
    studentId: i, userId: 1000 + i, login: `s${i}`, firstName: `First${i}`, lastName: `Last${i}`, fullname: `First${i} Last${i}`,
    email: `s${i}@example.com`, phone: '00123', mobile: null, street: 'Kwiatowa 4/5 ', zipCode: '01-123 ', city: 'Warszawa',
    language: 'pl_PL', isActive: 1, isAdult: 0, isArchived: 0, parentUserId: 5000 + i, parentFirstName: null, parentLastName: null,
    parentEmail: `p${i}@example.com`, parentPhone: null, parentMobile: null,
  };
}

export function roster(count: number, generatedAt = '2026-01-03T02:00:00.000Z'): RosterRecord {
  const rows = Array.from({ length: count }, (_, i) => rosterRow(i + 1));
  return { id: `roster:2026-01-03:${count}:${generatedAt}`, stream: 'roster', key: '2026-01-03', date: '2026-01-03', generatedAt, rows };
}
