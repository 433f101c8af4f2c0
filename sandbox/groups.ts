import { BridgeError } from '../src/errors.js';
import { groups as description } from '../src/streams/index.js';
import { formatUtcDateTime } from './dates.js';
import { createListCache, type ListBody } from './list-cache.js';
import { createRandom } from './prng.js';
import { indexOf } from './school.js';

/**
 * The sandbox's groups (`GET /api/v2/groups`, the `groups` stream): a few seeded groups of the
 * school, each with a teacher among the administrators, changed through `/_sandbox/groups`. Kept in
 * ascending id order (a new group gets the highest id), like the students and users.
 */
export interface Group {
  id: number;
  name: string;
  teacherUserId: number | null;
  createdAt: string;
  updatedAt: string;
}

export interface GroupPatch {
  name?: string;
  teacherUserId?: number | null;
}

export interface SavedGroups {
  nextId: number;
  groups: Group[];
}

export interface GroupBook {
  list(): Group[];
  body(): ListBody;
  create(fields: GroupPatch, now: string): Group;
  update(id: number, patch: GroupPatch, now: string): Group;
  remove(id: number): void;
  /** The groups and the next id (the sandbox's document). */
  saved(): SavedGroups;
  restore(saved: SavedGroups): void;
}

const NAMES = ['Angielski A1 — poniedziałki', 'Niemiecki A2', 'Hiszpański B1 — wieczorowa', 'Angielski B2 — matura', 'Francuski A1'] as const;
/** The seeded school's administrators (seed-data.ts): ids 1 to 3. */
const TEACHERS = [1, 2, 3] as const;
const SEEDED_AT = Date.UTC(2024, 8, 1);

/** The seeded groups: the same seed gives the same groups, whatever the school's size. */
export function seedGroups(seed: number): Group[] {
  const random = createRandom(seed + 0x6709);
  return NAMES.map((name, index) => {
    const at = formatUtcDateTime(SEEDED_AT + random.int(0, 30) * 86_400_000);
    return { id: index + 1, name, teacherUserId: random.chance(0.8) ? random.pick(TEACHERS) : null, createdAt: at, updatedAt: at };
  });
}

export function createGroupBook(seed: number, changed: () => void = () => {}): GroupBook {
  let groups = seedGroups(seed);
  let nextId = groups.length + 1;
  const cache = createListCache<Group>(description.list.array, (group) => group);

  const find = (id: number): number => {
    const index = indexOf(groups, id);
    if (index < 0) throw new BridgeError('sandbox.not_found', 'Group was not found', { status: 404, context: { id } });
    return index;
  };

  return {
    list: () => structuredClone(groups),
    body: () => cache.body(groups),
    create(fields, now) {
      const group: Group = { id: nextId++, name: fields.name ?? `Grupa ${nextId - 1}`, teacherUserId: fields.teacherUserId ?? null, createdAt: now, updatedAt: now };
      groups.push(group);
      cache.invalidate(groups.length - 1);
      changed();
      return structuredClone(group);
    },
    update(id, patch, now) {
      const index = find(id);
      const group = groups[index]!;
      Object.assign(group, patch, { updatedAt: now });
      cache.invalidate(index);
      changed();
      return structuredClone(group);
    },
    remove(id) {
      const index = find(id);
      groups.splice(index, 1);
      cache.invalidateFrom(index);
      changed();
    },
    saved: () => ({ nextId, groups }),
    restore(saved) {
      groups = structuredClone(saved.groups);
      nextId = saved.nextId;
      cache.invalidateFrom(0);
    },
  };
}
