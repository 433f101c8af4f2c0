import type { UserDirectory } from '../../src/connectors/user-directory.js';

/**
 * Who an invoice bills: its `userId` looked up among the polled users (the snapshot as it is when
 * the feed body is built). The names and e-mail of the user, and the billing fields its
 * `additionalData` has (the upstream leaves most of them null). Null when the invoice names no user
 * or the snapshot does not hold it (not polled yet, or deleted).
 */
export const BILLING_FIELDS = [
  'billingName', 'billingStreet', 'billingCity', 'billingZipCode', 'billingNipNumber', 'billingPesel', 'billingEmail',
] as const;

export interface Buyer {
  userId: number;
  firstName: unknown;
  lastName: unknown;
  email: unknown;
  /** Only the billing fields present in the user's additionalData. */
  [billingField: string]: unknown;
}

/** The invoice's `userId` when it is one (an integer, or its decimal text). */
export function buyerId(invoice: Record<string, unknown>): number | undefined {
  const value = invoice.userId;
  const id = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  return typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

/** Pure: a polled user → the buyer the feed names. */
export function buyerOf(userId: number, user: Record<string, unknown> | undefined): Buyer | null {
  if (!user) return null;
  const data = (typeof user.additionalData === 'object' && user.additionalData !== null ? user.additionalData : {}) as Record<string, unknown>;
  const buyer: Buyer = { userId, firstName: user.firstName ?? null, lastName: user.lastName ?? null, email: data.email ?? null };
  for (const field of BILLING_FIELDS) if (field in data) buyer[field] = data[field];
  return buyer;
}

export async function findBuyer(invoice: Record<string, unknown>, users: UserDirectory | undefined): Promise<Buyer | null> {
  const id = buyerId(invoice);
  if (id === undefined || !users) return null;
  return buyerOf(id, await users.get(id));
}

/** The buyer as one ledger cell: the billing name when there is one, else the user's names. */
export function buyerName(buyer: Buyer | null): string | null {
  if (!buyer) return null;
  if (typeof buyer.billingName === 'string' && buyer.billingName.trim() !== '') return buyer.billingName;
  const names = [buyer.firstName, buyer.lastName].filter((part): part is string => typeof part === 'string' && part !== '');
  return names.length > 0 ? names.join(' ') : null;
}
