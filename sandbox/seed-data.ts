import { formatUtcDateTime } from './dates.js';
import { LANGUAGES } from './names.js';
import { createRandom, type Random } from './prng.js';
import { emailFor, flag, loginFor, makeContact, makePerson, type Person } from './people.js';
import type { SystemRole } from './types.js';
import { emptyAdditionalData, type StudentRow, type UserRow } from './views.js';

/**
 * The deterministic school a seed makes: a few administrators, then for each student a student user
 * and a parent user, ids ascending with occasional gaps (deleted records). Same seed and count → the
 * same school, byte for byte. Linear in the count: 100,000 students take well under a second.
 */
export interface School {
  students: StudentRow[];
  users: UserRow[];
  nextStudentId: number;
  nextUserId: number;
  nextContactId: number;
}

const SEED_START = Date.UTC(2019, 0, 1);
const SEED_END = Date.UTC(2026, 5, 30);

interface UserSpec {
  id: number;
  login: string;
  person: Person | null;
  role: SystemRole;
  isArchived: 0 | 1;
  createdAt: string | null;
  updatedAt: string;
}

export function makeUserRow(random: Random, spec: UserSpec): UserRow {
  const { person } = spec;
  const fullname = person ? `${person.firstName} ${person.lastName}` : null;
  const normal = random.chance(0.9);
  return {
    id: spec.id, login: spec.login, name: fullname, firstName: person?.firstName ?? null,
    lastName: person?.lastName ?? null, fullname, systemRole: spec.role, isArchived: spec.isArchived, photo: null,
    language: random.pick(LANGUAGES), tosAccepted: random.chance(0.8) ? 1 : random.chance(0.5) ? 0 : null,
    type: normal ? 0 : null, typeName: normal ? 'normal' : null, createdAt: spec.createdAt, updatedAt: spec.updatedAt,
    additionalData: emptyAdditionalData(), parentUserId: null,
  };
}

function seedTimes(random: Random): { createdAt: string; updatedAt: string } {
  const created = SEED_START + Math.floor(random.next() * (SEED_END - SEED_START));
  const updated = created + Math.floor(random.next() * (SEED_END - created));
  return { createdAt: formatUtcDateTime(created), updatedAt: formatUtcDateTime(updated) };
}

function administrators(random: Random): UserRow[] {
  const people: [string, Person][] = [
    ['admin', { firstName: 'Administrator', lastName: 'Systemu' }],
    ['sekretariat', { firstName: 'Bożena', lastName: 'Świątek' }],
    ['dyrektor', { firstName: 'Jędrzej', lastName: 'Łęcki' }],
  ];
  return people.map(([login, person], index) => ({
    ...makeUserRow(random, { id: index + 1, login, person, role: 'administrator', isArchived: 0, ...seedTimes(random) }),
    language: 'pl_PL',
  }));
}

export function generateSchool(seed: number, count: number): School {
  const random = createRandom(seed);
  const school: School = { students: [], users: administrators(random), nextStudentId: 1, nextUserId: 4, nextContactId: 1 };
  for (let index = 0; index < count; index++) {
    // About one id in 20 is skipped: records deleted long ago leave gaps.
    if (random.chance(0.05)) school.nextStudentId++;
    if (random.chance(0.05)) school.nextUserId++;
    seedStudent(random, school);
  }
  applyKnownQuirks(school);
  return school;
}

/**
 * The quirks of the public example (docs/upstream.md), pinned on the first students so that even a small
 * school shows each one; the random rates add more in big schools.
 */
function applyKnownQuirks(school: School): void {
  const userOf = (index: number): UserRow | undefined => {
    const student = school.students[index];
    return student && school.users.find((user) => user.id === student.userId);
  };
  const first = userOf(0);
  if (first) Object.assign(first.additionalData, { street: 'Kwiatowa 4/5 ', zipCode: '01-123 ', city: 'Warszawa' });
  const second = userOf(1);
  if (second) second.additionalData.phone = 'ffdfff';
  const third = userOf(2);
  const parent = third && school.users.find((user) => user.id === third.parentUserId);
  if (parent) Object.assign(parent, { name: null, firstName: null, lastName: null, fullname: null });
  const fourth = school.students[3];
  const fourthUser = userOf(3);
  if (fourth && fourthUser) {
    fourth.isActive = 1;
    fourthUser.isArchived = 1;
  }
  const fifth = userOf(4);
  if (fifth && fifth.firstName && fifth.lastName) {
    fifth.additionalData.email = `${fifth.firstName}.${fifth.lastName}@poczta.fm`.toLowerCase();
  }
}

function seedStudent(random: Random, school: School): void {
  const times = seedTimes(random);
  const person = makePerson(random);
  const isActive = random.chance(0.9);
  // docs/upstream.md: an active-looking student whose user is archived exists in the real data.
  const isArchived = !isActive || random.chance(0.02);
  const userId = school.nextUserId++;
  const user = makeUserRow(random, {
    id: userId, login: loginFor(person, userId), person, role: 'student', isArchived: flag(isArchived), ...times,
  });
  user.additionalData = makeContact(random, { id: school.nextContactId++, email: emailFor(random, person, userId), ...times });
  const parent = seedParent(random, school, person, times);
  user.parentUserId = parent.id;
  school.users.push(user, parent);
  school.students.push({
    id: school.nextStudentId++, isAdult: flag(random.chance(0.3)), isActive: flag(isActive), ...times, userId,
  });
}

function seedParent(random: Random, school: School, child: Person, times: { createdAt: string; updatedAt: string }): UserRow {
  const id = school.nextUserId++;
  // docs/upstream.md: a parent whose names are all null.
  const person = random.chance(0.03) ? null : makePerson(random, child.lastName);
  const parent = makeUserRow(random, {
    id, login: person ? loginFor(person, id) : `rodzic${id}`, person, role: 'parent', isArchived: 0,
    createdAt: random.chance(0.01) ? null : times.createdAt, updatedAt: times.updatedAt,
  });
  // A third of parents never filled in their details: additionalData all null, as after creation.
  if (person && random.chance(0.66)) {
    parent.additionalData = makeContact(random, { id: school.nextContactId++, email: emailFor(random, person, id), ...times });
  }
  return parent;
}
