import { BridgeError } from '../src/errors.js';
import { COURSES } from './names.js';
import type { Random } from './prng.js';
import type { Invoice } from './types.js';

/**
 * Invoices exist in the sandbox only to fire `invoice.*` events. A new invoice has every field of the
 * seed document, in its order, with plausible values; fields passed by the caller override them and
 * unknown ones pass through (the bridge must keep fields it does not know).
 */
export interface InvoiceBook {
  create(fields: Record<string, unknown>, context: InvoiceContext): Invoice;
  update(id: number, fields: Record<string, unknown>, now: string): Invoice;
  list(): Invoice[];
  forget(id: number): void;
  /** The invoices and the next id and number (the sandbox's document). */
  saved(): SavedInvoices;
  restore(saved: SavedInvoices): void;
}

export interface SavedInvoices {
  nextId: number;
  nextNumber: number;
  invoices: Invoice[];
}

export interface InvoiceContext {
  now: string;
  random: Random;
  /** A user to bill when the caller names none. */
  userId: number;
}

export function createInvoiceBook(changed: () => void = () => {}): InvoiceBook {
  const invoices = new Map<number, Invoice>();
  let nextId = 1001;
  let nextNumber = 1;

  return {
    create(fields, { now, random, userId }) {
      const id = typeof fields.id === 'number' ? fields.id : nextId++;
      if (id >= nextId) nextId = id + 1;
      const numberId = nextNumber++;
      const invoice: Invoice = {
        id, userId, paymentFormId: random.int(1, 3), date: now, soldAt: now, paidAt: now, deliveredAt: now,
        dayLimit: random.pick([7, 14, 30]), place: 'Warszawa', statusOffice: 2, statusPrint: 2,
        statusOfficeName: 'paid', statusPrintName: 'paid', daysOutdated: null, numberId,
        description: `FV ${numberId}/${now.slice(5, 7)}/${now.slice(0, 4)} — ${random.pick(COURSES)}`,
        creatorUserId: 1, schoolId: 1, connectedId: 0, createdAt: now, updatedAt: now, currencyExchange: null,
        ...fields,
      };
      invoices.set(invoice.id, invoice);
      changed();
      return structuredClone(invoice);
    },
    update(id, fields, now) {
      const invoice = invoices.get(id);
      if (!invoice) throw new BridgeError('sandbox.not_found', 'Invoice was not found', { status: 404, context: { id } });
      Object.assign(invoice, { updatedAt: now }, fields, { id });
      changed();
      return structuredClone(invoice);
    },
    list: () => [...invoices.values()].map((invoice) => structuredClone(invoice)),
    forget(id) {
      if (invoices.delete(id)) changed();
    },
    saved: () => ({ nextId, nextNumber, invoices: [...invoices.values()] }),
    restore(saved) {
      invoices.clear();
      for (const invoice of structuredClone(saved.invoices)) invoices.set(invoice.id, invoice);
      ({ nextId, nextNumber } = saved);
    },
  };
}
