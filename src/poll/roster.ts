import type { RosterRecord, RosterRow } from '../records.js';
import { canonicalJson, isPlainObject, shortHash } from './canonical.js';

/**
 * The roster export, pure: one row per student with its user's and its parent's contact
 * fields, ordered by student id, and one record holding them all. Values pass through as they came
 * (docs/upstream.md: no trimming); a non-string where a string belongs is written as text, absent as null.
 */
type Obj = Record<string, unknown>;

const obj = (value: unknown): Obj => (isPlainObject(value) ? value : {});
const text = (value: unknown): string | null => (value === null || value === undefined ? null : typeof value === 'string' ? value : String(value));
const int = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

export function rosterRow(student: Obj): RosterRow {
  const user = obj(student.user);
  const contact = obj(user.additionalData);
  const parent = obj(user.parentUser);
  const parentContact = obj(parent.additionalData);
  return {
    studentId: student.id as number,
    userId: int(user.id),
    login: text(user.login),
    firstName: text(user.firstName),
    lastName: text(user.lastName),
    fullname: text(user.fullname),
    email: text(contact.email),
    phone: text(contact.phone),
    mobile: text(contact.mobile),
    street: text(contact.street),
    zipCode: text(contact.zipCode),
    city: text(contact.city),
    language: text(user.language),
    isActive: int(student.isActive),
    isAdult: int(student.isAdult),
    isArchived: int(user.isArchived),
    parentUserId: int(parent.id),
    parentFirstName: text(parent.firstName),
    parentLastName: text(parent.lastName),
    parentEmail: text(parentContact.email),
    parentPhone: text(parentContact.phone),
    parentMobile: text(parentContact.mobile),
  };
}

export function rosterRows(students: readonly Obj[]): RosterRow[] {
  return students.map(rosterRow).sort((a, b) => a.studentId - b.studentId);
}

/** `YYYY-MM-DD` of an instant in an IANA timezone. */
export function localDate(nowMs: number, timeZone: string): string {
  // en-CA formats dates as YYYY-MM-DD.
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(nowMs));
}

/** One roster record; its id depends on the date and the rows only, so a re-run is not delivered twice. */
export function rosterRecord(rows: RosterRow[], nowMs: number, timeZone: string): RosterRecord {
  const date = localDate(nowMs, timeZone);
  return {
    id: `roster:${date}:${shortHash(canonicalJson(rows))}`,
    stream: 'roster',
    key: date,
    date,
    generatedAt: new Date(nowMs).toISOString(),
    rows,
  };
}
