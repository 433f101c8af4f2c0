import type { Random } from './prng.js';
import type { AdditionalData, Flag } from './types.js';
import {
  CITIES, EMAIL_DOMAINS, FEMALE_FIRST_NAMES, MALE_FIRST_NAMES, PLAIN_SURNAMES, STREETS, feminineSurname, toAscii,
} from './names.js';
import { emptyAdditionalData } from './views.js';

/**
 * Makes one realistic Polish person and contact record from a Random. The quirks of docs/upstream.md are
 * built in at fixed rates (trailing spaces in street/zipCode, phone "ffdfff", e-mails that keep their
 * diacritics), so every seeded school of a few dozen students has some of each.
 */
export interface Person {
  firstName: string;
  lastName: string;
}

export function makePerson(random: Random, surname?: string): Person {
  const female = random.chance(0.5);
  const base = surname ?? random.pick(PLAIN_SURNAMES);
  return {
    firstName: female ? random.pick(FEMALE_FIRST_NAMES) : random.pick(MALE_FIRST_NAMES),
    lastName: female ? feminineSurname(base) : base.replace(/(sk|ck|dzk)a$/, '$1i'),
  };
}

export function loginFor(person: Person, serial: number): string {
  return `${toAscii(person.firstName)}.${toAscii(person.lastName)}${serial}`.toLowerCase().replace(/[^a-z0-9.]/g, '');
}

export function emailFor(random: Random, person: Person, serial: number): string {
  const local = `${person.firstName}.${person.lastName}`.toLowerCase().replace(/\s+/g, '');
  // About one address in 60 keeps its Polish letters (internationalized local part), as real schools have.
  const text = random.chance(1 / 60) ? local : toAscii(local);
  return `${text}${serial % 7 === 0 ? '' : serial}@${random.pick(EMAIL_DOMAINS)}`;
}

export function phoneNumber(random: Random, first: string): string {
  return `+48 ${first}${random.int(10, 99)} ${random.int(100, 999)} ${random.int(100, 999)}`;
}

export interface ContactOptions {
  id: number;
  email: string;
  createdAt: string;
  updatedAt: string;
}

export function makeContact(random: Random, options: ContactOptions): AdditionalData {
  const [city, zipFirst] = random.pick(CITIES);
  const trailing = (): string => (random.chance(0.05) ? ' ' : '');
  return {
    ...emptyAdditionalData(),
    id: options.id,
    phone: random.chance(0.02) ? 'ffdfff' : random.chance(0.7) ? phoneNumber(random, '2') : null,
    mobile: random.chance(0.85) ? phoneNumber(random, String(random.pick([5, 6, 7, 8]))) : null,
    email: options.email,
    skype: random.chance(0.1) ? `${options.email.split('@')[0] ?? 'skype'}.skype` : null,
    street: `${random.pick(STREETS)} ${random.int(1, 120)}${random.chance(0.4) ? `/${random.int(1, 60)}` : ''}${trailing()}`,
    zipCode: `${zipFirst}${random.int(0, 9)}-${String(random.int(0, 999)).padStart(3, '0')}${trailing()}`,
    city,
    createdAt: options.createdAt,
    updatedAt: options.updatedAt,
  };
}

export const flag = (value: boolean): Flag => (value ? 1 : 0);
