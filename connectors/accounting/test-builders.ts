import type { EventRecord } from '../../src/records.js';

/** A valid invoice record (test builder): each test changes one thing. */
export function invoiceRecord(overrides: Partial<EventRecord> = {}, invoice: Record<string, unknown> = {}): EventRecord {
  return {
    id: 'invoices:invoice.created:1001:0123456789ab',
    stream: 'invoices',
    event: 'invoice.created',
    key: 1001,
    receivedAt: '2026-11-22T10:00:00.000Z',
    record: {
      id: 1001, userId: 7, paymentFormId: 1, date: '2026-11-22 11:00:00', soldAt: '2026-11-22 11:00:00',
      paidAt: '2026-11-22 11:00:00', deliveredAt: '2026-11-22 11:00:00', dayLimit: 14, place: 'Warszawa',
      statusOffice: 2, statusPrint: 2, statusOfficeName: 'paid', statusPrintName: 'paid', daysOutdated: null,
      numberId: 1, description: 'FV 1/11/2026', creatorUserId: 1, schoolId: 1, connectedId: 0,
      createdAt: '2026-11-22 11:00:00', updatedAt: '2026-11-22 11:00:00', currencyExchange: null, ...invoice,
    },
    ...overrides,
  };
}
