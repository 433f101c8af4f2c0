import type { PeopleStore, Person, SnapshotStream } from '../store/index.js';
import { PEOPLE_STREAMS, polledStream } from '../streams/index.js';

/**
 * Names next to ids: what a person reads instead of `students:123:9f2c41d07a1e`. A polled record's
 * id starts with its stream and key; an event's names the event and the object's id. The people
 * streams (those whose description has `person`, src/streams/) have integer keys.
 */
const PERSON_ID = new RegExp(`^(${PEOPLE_STREAMS.join('|')}):(\\d{1,15})(?::|$)`);

export function personRefOf(recordId: string): { stream: SnapshotStream; key: number } | undefined {
  const match = PERSON_ID.exec(recordId);
  return match ? { stream: match[1] as SnapshotStream, key: Number(match[2]) } : undefined;
}

/** What the console calls one record of a people stream: `student`, `user`. */
export const personNoun = (stream: SnapshotStream): string => polledStream(stream).person?.noun ?? stream;

/** Whether a person's user is nested in its record (a student's user): then the user's id is shown too. */
export const hasOwnUser = (stream: SnapshotStream): boolean => (polledStream(stream).person?.user.length ?? 0) > 0;

/** What a record is about, in words, without the person's name (see namesOf). */
export function recordLabel(recordId: string): string {
  const person = personRefOf(recordId);
  if (person) return `${personNoun(person.stream)} ${person.key}`;
  const event = /^(events|invoices):([^:]+):([^:]+):/.exec(recordId);
  if (event) return event[2]!.startsWith('invoice.') ? `invoice ${event[3]} (${event[2]})` : `${event[2]} ${event[3]}`;
  const roster = /^roster:(\d{4}-\d{2}-\d{2}):/.exec(recordId);
  if (roster) return `roster of ${roster[1]}`;
  return recordId;
}

/** Each record's name: the person's from the snapshot's index, or its label. */
export async function namesOf(people: Pick<PeopleStore, 'get'>, recordIds: readonly string[]): Promise<Map<string, string>> {
  const refs = recordIds.map(personRefOf).filter((r): r is NonNullable<typeof r> => r !== undefined);
  const found = refs.length === 0 ? [] : await people.get(refs);
  const byKey = new Map(found.map((p: Person) => [`${p.stream}:${p.key}`, p.name]));
  return new Map(recordIds.map((id) => {
    const ref = personRefOf(id);
    const name = ref ? byKey.get(`${ref.stream}:${ref.key}`) : undefined;
    return [id, name ? `${name} (${recordLabel(id)})` : recordLabel(id)];
  }));
}
