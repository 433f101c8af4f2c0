import { BridgeError } from '../src/errors.js';
import { students, users } from '../src/streams/index.js';
import { createListCache, type ListBody } from './list-cache.js';
import { generateSchool, type School } from './seed-data.js';
import type { Student, User } from './types.js';
import { studentView, userView, type StudentRow, type UserRow } from './views.js';

/** What the sandbox's document keeps of the school: every row, and the next ids to give. */
export interface SchoolRows {
  students: StudentRow[];
  users: UserRow[];
  counters: SchoolState['counters'];
}

/**
 * The sandbox's students and users: rows kept in ascending id order (new ids are always the highest,
 * so inserts append), maps by id, and cached list bodies invalidated on every change. `changed` is
 * told of every change (the sandbox's document is written after it).
 */
export class SchoolState {
  private readonly studentRows: StudentRow[];
  private readonly userRows: UserRow[];
  private readonly studentsById = new Map<number, StudentRow>();
  private readonly usersById = new Map<number, UserRow>();
  /** Student id by the id of its user and of its parent user: a user change shows in the students list too. */
  private readonly studentByUserId = new Map<number, number>();
  readonly counters: Pick<School, 'nextStudentId' | 'nextUserId' | 'nextContactId'>;
  private readonly studentsCache = createListCache<StudentRow>(students.list.array, (row) => this.studentOf(row));
  private readonly usersCache = createListCache<UserRow>(users.list.array, (row) => userView(row, null));
  changed: () => void = () => {};

  constructor(seed: number, count: number) {
    const school = generateSchool(seed, count);
    this.studentRows = school.students;
    this.userRows = school.users;
    this.counters = { nextStudentId: school.nextStudentId, nextUserId: school.nextUserId, nextContactId: school.nextContactId };
    this.index();
  }

  private index(): void {
    this.usersById.clear();
    this.studentsById.clear();
    this.studentByUserId.clear();
    for (const row of this.userRows) this.usersById.set(row.id, row);
    for (const row of this.studentRows) this.indexStudent(row);
  }

  /** The rows as they are now (live: whoever keeps them copies or serializes them at once). */
  rows(): SchoolRows {
    return { students: this.studentRows, users: this.userRows, counters: this.counters };
  }

  /** Takes over saved rows (a copy of them) in place of the seeded ones. */
  restore(saved: SchoolRows): void {
    const copy = structuredClone(saved);
    replaceAll(this.studentRows, copy.students);
    replaceAll(this.userRows, copy.users);
    Object.assign(this.counters, copy.counters);
    this.index();
    this.studentsCache.invalidateFrom(0);
    this.usersCache.invalidateFrom(0);
  }

  private indexStudent(row: StudentRow): void {
    this.studentsById.set(row.id, row);
    this.studentByUserId.set(row.userId, row.id);
    const parentId = this.usersById.get(row.userId)?.parentUserId;
    if (parentId != null) this.studentByUserId.set(parentId, row.id);
  }

  studentsBody(): ListBody {
    return this.studentsCache.body(this.studentRows);
  }

  usersBody(): ListBody {
    return this.usersCache.body(this.userRows);
  }

  /** Renders both list bodies ahead of the first request (yielding between chunks); stops early on abort. */
  async warm(signal: AbortSignal): Promise<void> {
    for (const body of [this.studentsBody(), this.usersBody()]) {
      for await (const chunk of body.chunks) {
        void chunk;
        if (signal.aborted) return;
      }
    }
  }

  studentOf(row: StudentRow): Student {
    const user = this.usersById.get(row.userId);
    if (!user) throw new Error(`student ${row.id} has no user ${row.userId}`);
    return studentView(row, user, user.parentUserId == null ? undefined : this.usersById.get(user.parentUserId));
  }

  student(id: number): Student | undefined {
    const row = this.studentsById.get(id);
    return row && this.studentOf(row);
  }

  students(): Student[] {
    return this.studentRows.map((row) => this.studentOf(row));
  }

  user(id: number): User | undefined {
    const row = this.usersById.get(id);
    return row && userView(row, null);
  }

  users(): User[] {
    return this.userRows.map((row) => userView(row, null));
  }

  studentRow(id: number): StudentRow {
    const row = this.studentsById.get(id);
    if (!row) throw new BridgeError('sandbox.not_found', 'Student was not found', { status: 404, context: { id } });
    return row;
  }

  userRow(id: number): UserRow {
    const row = this.usersById.get(id);
    if (!row) throw new BridgeError('sandbox.not_found', 'User was not found', { status: 404, context: { id } });
    return row;
  }

  /** The student whose user (or parent user) has this id. */
  studentIdOfUser(userId: number): number | undefined {
    return this.studentByUserId.get(userId);
  }

  userIds(): number[] {
    return this.userRows.map((row) => row.id);
  }

  studentIds(): number[] {
    return this.studentRows.map((row) => row.id);
  }

  /** Appends new rows; their ids must be higher than every existing one. */
  add(student: StudentRow | null, users: UserRow[]): void {
    for (const user of users) {
      assertAscending(this.userRows, user.id);
      this.userRows.push(user);
      this.usersById.set(user.id, user);
      this.usersCache.invalidate(this.userRows.length - 1);
    }
    if (student) {
      assertAscending(this.studentRows, student.id);
      this.studentRows.push(student);
      this.indexStudent(student);
      this.studentsCache.invalidate(this.studentRows.length - 1);
    }
    this.changed();
  }

  /** Call after mutating a row in place: drops the cached chunks that show it. */
  touchUser(id: number): void {
    this.usersCache.invalidate(indexOf(this.userRows, id));
    const studentId = this.studentByUserId.get(id);
    if (studentId !== undefined) this.touchStudent(studentId);
    this.changed();
  }

  touchStudent(id: number): void {
    this.studentsCache.invalidate(indexOf(this.studentRows, id));
    this.changed();
  }

  removeStudent(id: number): void {
    const row = this.studentRow(id);
    const index = indexOf(this.studentRows, id);
    this.studentRows.splice(index, 1);
    this.studentsById.delete(id);
    const parentId = this.usersById.get(row.userId)?.parentUserId;
    for (const userId of [row.userId, parentId]) {
      if (userId != null && this.studentByUserId.get(userId) === id) this.studentByUserId.delete(userId);
    }
    this.studentsCache.invalidateFrom(index);
    this.changed();
  }

  removeUser(id: number): void {
    this.userRow(id);
    const index = indexOf(this.userRows, id);
    this.userRows.splice(index, 1);
    this.usersById.delete(id);
    this.studentByUserId.delete(id);
    this.usersCache.invalidateFrom(index);
    this.changed();
  }
}

/** In place, element by element (a spread of 100,000 rows would overflow the call stack). */
function replaceAll<T>(target: T[], rows: readonly T[]): void {
  target.length = 0;
  for (const row of rows) target.push(row);
}

function assertAscending(rows: readonly { id: number }[], id: number): void {
  const last = rows[rows.length - 1];
  if (last && last.id >= id) throw new Error(`id ${id} is not above ${last.id}`);
}

/** Binary search in rows sorted by id; -1 when absent. */
export function indexOf(rows: readonly { id: number }[], id: number): number {
  let low = 0;
  let high = rows.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const value = (rows[middle] as { id: number }).id;
    if (value === id) return middle;
    if (value < id) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}
