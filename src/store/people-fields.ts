import { polledStream } from '../streams/index.js';
import type { Person } from './history-port.js';
import type { SnapshotStream } from './port.js';

/**
 * How the name index (PeopleStore) reads a person out of a snapshot row, the same on every engine:
 * the engines extract these fields in SQL (only they touch the rows' JSON), and these pure functions
 * make the name shown and the text searched. Where the fields are is in the stream's description
 * (`person.user`, src/streams/): a student's are its user's (`user.firstName`), a user's its own.
 */
export const PERSON_FIELDS = ['userId', 'firstName', 'lastName', 'fullname', 'name', 'login', 'email'] as const;
export type PersonField = (typeof PERSON_FIELDS)[number];

const PATHS: Record<PersonField, readonly string[]> = {
  userId: ['id'],
  firstName: ['firstName'],
  lastName: ['lastName'],
  fullname: ['fullname'],
  name: ['name'],
  login: ['login'],
  email: ['additionalData', 'email'],
};

/** The path of a field in a row of `stream` (a people stream), as a list of keys. */
export function fieldPath(stream: SnapshotStream, field: PersonField): string[] {
  const person = polledStream(stream).person;
  if (!person) throw new Error(`${stream} holds no people`);
  return [...person.user, ...PATHS[field]];
}

/** Lower case, no diacritics (ł is a letter of its own to Unicode, so it is named). */
export function foldText(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/ł/g, 'l').replace(/ø/g, 'o').replace(/ß/g, 'ss');
}

const present = (value: unknown): string | undefined => {
  if (value === null || value === undefined) return undefined;
  const text = String(value).trim();
  return text === '' ? undefined : text;
};

/** What the index keeps of one row: the fields as the engine extracted them (any type, or null). */
export interface IndexedPerson {
  person: Person;
  /** What a search looks in: name, e-mail and login, folded. */
  search: string;
}

export function indexPerson(stream: SnapshotStream, key: number, chain: string, fields: Partial<Record<PersonField, unknown>>): IndexedPerson {
  const first = present(fields.firstName);
  const last = present(fields.lastName);
  const login = present(fields.login);
  const email = present(fields.email);
  const name = present(fields.fullname) ?? ([first, last].filter(Boolean).join(' ') || undefined) ?? present(fields.name) ?? login ?? '';
  const userId = present(fields.userId);
  const person: Person = {
    stream, key, chain, name,
    ...(userId !== undefined && /^\d{1,15}$/.test(userId) ? { userId: Number(userId) } : {}),
    ...(email ? { email } : {}),
  };
  const search = foldText([name, first, last, present(fields.name), login, email].filter(Boolean).join('\n'));
  return { person, search };
}
