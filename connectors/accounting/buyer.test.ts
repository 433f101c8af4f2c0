import { describe, expect, it } from 'vitest';
import { buyerId, buyerName, buyerOf, findBuyer } from './buyer.js';

const user = {
  id: 7, firstName: 'Anna', lastName: 'Kowalska',
  additionalData: { email: 'anna@example.pl', billingName: null, billingNipNumber: '1234563218', street: 'Kwiatowa 4/5 ' },
};

describe('the buyer', () => {
  it.each([
    [{ userId: 7 }, 7],
    [{ userId: '7' }, 7],
    [{ userId: 0 }, undefined],
    [{ userId: 'x' }, undefined],
    [{ userId: 1.5 }, undefined],
    [{}, undefined],
  ])('userId of %j → %j', (invoice, expected) => {
    expect(buyerId(invoice)).toBe(expected);
  });

  it('names and e-mail of the user, and only the billing fields its additionalData has', () => {
    expect(buyerOf(7, user)).toEqual({ userId: 7, firstName: 'Anna', lastName: 'Kowalska', email: 'anna@example.pl', billingName: null, billingNipNumber: '1234563218' });
    expect(buyerOf(7, { id: 7, firstName: null, lastName: null, additionalData: null })).toEqual({ userId: 7, firstName: null, lastName: null, email: null });
    expect(buyerOf(7, undefined)).toBeNull();
  });

  it('is looked up in the directory, null when unknown or not looked up', async () => {
    const users = { get: async (id: number) => (id === 7 ? user : undefined) };
    expect(await findBuyer({ userId: 7 }, users)).toMatchObject({ userId: 7, lastName: 'Kowalska' });
    expect(await findBuyer({ userId: 8 }, users)).toBeNull();
    expect(await findBuyer({ userId: 7 }, undefined)).toBeNull();
  });

  it('as one ledger cell: the billing name first, else the names', () => {
    expect(buyerName({ userId: 7, firstName: 'Anna', lastName: 'Kowalska', email: null, billingName: 'Szkoła Językowa Sp. z o.o.' })).toBe('Szkoła Językowa Sp. z o.o.');
    expect(buyerName({ userId: 7, firstName: 'Anna', lastName: 'Kowalska', email: null, billingName: ' ' })).toBe('Anna Kowalska');
    expect(buyerName({ userId: 7, firstName: null, lastName: null, email: null })).toBeNull();
    expect(buyerName(null)).toBeNull();
  });
});
