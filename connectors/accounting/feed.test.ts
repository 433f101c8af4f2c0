import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildFeedBody, deriveDates, isInvoicePaid } from './feed.js';
import { invoiceRecord } from './test-builders.js';

describe('isInvoicePaid', () => {
  it.each([
    ['status 2 named paid', { statusOffice: 2, statusOfficeName: 'paid' }, true],
    ['status 2 alone', { statusOffice: 2 }, true],
    ['status 2 as a string', { statusOffice: '2' }, true],
    ['the name alone, any case and spacing', { statusOfficeName: ' Paid ' }, true],
    ['another status', { statusOffice: 1, statusOfficeName: 'unpaid' }, false],
    ['another status with an empty name', { statusOffice: 0, statusOfficeName: '' }, false],
    ['a name other than paid', { statusOfficeName: 'issued' }, false],
    ['no status at all', {}, null],
    ['null status fields', { statusOffice: null, statusOfficeName: null }, null],
    ['paidAt alone proves nothing', { paidAt: '2026-01-01 10:00:00' }, null],
  ])('%s → %s', (_name, invoice, expected) => {
    expect(isInvoicePaid(invoice)).toBe(expected);
  });
});

describe('deriveDates', () => {
  it('converts every known date field and any other top-level date-time; unusable ones are null', () => {
    const dates = deriveDates(
      { date: '2026-01-10 09:00:00', paidAt: '0000-00-00 00:00:00', createdAt: null, dueAt: '2026-07-10 09:00:00', note: 'x' },
      'Europe/Warsaw',
    );
    expect(dates).toEqual({
      date: '2026-01-10T09:00:00+01:00', soldAt: null, paidAt: null, deliveredAt: null, createdAt: null, updatedAt: null,
      dueAt: '2026-07-10T09:00:00+02:00',
    });
  });
});

describe('buildFeedBody', () => {
  it('carries the invoice exactly as received, the event, the id and the conveniences', () => {
    const record = invoiceRecord({}, { someUnknownField: { nested: ['ż', 1] } });
    const body = buildFeedBody(record, 'Europe/Warsaw');
    expect(body).toMatchObject({
      schemaVersion: 1, recordId: record.id, event: 'invoice.created', invoiceId: 1001, receivedAt: '2026-11-22T10:00:00.000Z',
      derived: { timezone: 'Europe/Warsaw', receivedAtLocal: '2026-11-22T11:00:00+01:00', isPaid: true, buyer: null },
    });
    expect(body.derived.dates.date).toBe('2026-11-22T11:00:00+01:00');
    expect(body.invoice).toBe(record.record);
  });

  it('names the buyer under derived', () => {
    const buyer = { userId: 7, firstName: 'Anna', lastName: 'Kowalska', email: 'anna@example.pl' };
    expect(buildFeedBody(invoiceRecord(), 'Europe/Warsaw', buyer).derived.buyer).toEqual(buyer);
  });

  it('keeps every field of any invoice object through JSON, unchanged', () => {
    const json = fc.dictionary(fc.string(), fc.jsonValue());
    fc.assert(
      fc.property(json, (invoice) => {
        const record = invoiceRecord({ record: invoice });
        const sent = JSON.parse(JSON.stringify(buildFeedBody(record, 'Europe/Warsaw'))) as { invoice: unknown };
        expect(sent.invoice).toEqual(JSON.parse(JSON.stringify(invoice)));
      }),
    );
  });
});
