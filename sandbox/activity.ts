import type { Logger } from 'pino';
import type { Clock } from '../src/clock.js';
import { describeError } from '../src/errors.js';
import { CITIES, STREETS } from './names.js';
import { makePerson } from './people.js';
import type { Random } from './prng.js';
import type { SandboxControl, Student } from './types.js';

/**
 * A living school for demos (`--activity`): every `intervalMs` one plausible change — a new student,
 * a rename or move, an archival, a new or paid invoice. Driven by the seeded Random, so a run with
 * the same seed and clock makes the same changes.
 */
export type ActivityAction = 'newStudent' | 'rename' | 'move' | 'archive' | 'newInvoice' | 'updateInvoice';

const WEIGHTS: readonly [ActivityAction, number][] = [
  ['newStudent', 25], ['rename', 15], ['move', 15], ['archive', 10], ['newInvoice', 25], ['updateInvoice', 10],
];

/**
 * The school keeps about the size it was seeded with however long the activity runs: a demo left
 * running for a month would otherwise make some 160,000 students, and a sandbox document of hundreds
 * of megabytes written again after every change. Past `schoolCap(size)` students a new student's
 * place goes to one leaving (an archived student is deleted with its parent user; with none archived,
 * one is archived first), and past `keptInvoices(size)` the oldest invoice is forgotten (it only
 * ever fired events).
 */
export const schoolCap = (size: number): number => size + Math.max(10, Math.ceil(size / 5));
export const keptInvoices = (size: number): number => Math.max(200, 2 * size);

/** Pure: the action a random number in [0, 1) picks. */
export function pickAction(roll: number): ActivityAction {
  const total = WEIGHTS.reduce((sum, [, weight]) => sum + weight, 0);
  let threshold = roll * total;
  for (const [action, weight] of WEIGHTS) {
    if (threshold < weight) return action;
    threshold -= weight;
  }
  return 'newStudent';
}

export function performAction(action: ActivityAction, control: SandboxControl, random: Random, size: number): string {
  const students = control.students();
  const student = students.length > 0 ? random.pick(students) : undefined;
  const invoices = action === 'updateInvoice' || action === 'newInvoice' ? control.invoices() : [];
  if (action === 'newInvoice' || (action === 'updateInvoice' && invoices.length === 0)) {
    const created = control.createInvoice();
    const oldest = invoices.length + 1 > keptInvoices(size) ? invoices.reduce((a, b) => (a.id < b.id ? a : b)) : undefined;
    if (oldest) control.forgetInvoice(oldest.id);
    return `invoice ${created.id} created${oldest ? `, invoice ${oldest.id} forgotten` : ''}`;
  }
  if (action === 'updateInvoice') {
    const invoice = random.pick(invoices);
    control.updateInvoice(invoice.id, { statusOffice: 2, statusOfficeName: 'paid', daysOutdated: 0 });
    return `invoice ${invoice.id} updated`;
  }
  if (action === 'newStudent' && students.length >= schoolCap(size)) return leave(students, control, random);
  if (action === 'newStudent' || !student) return `student ${control.createStudent().id} created`;
  if (action === 'archive') return `student ${control.archiveStudent(student.id).id} archived`;
  if (action === 'rename') {
    // A marriage: the surname changes, the rest stays.
    control.updateStudent(student.id, { lastName: makePerson(random).lastName });
    return `student ${student.id} renamed`;
  }
  const [city, zip] = random.pick(CITIES);
  control.updateStudent(student.id, { street: `${random.pick(STREETS)} ${random.int(1, 99)}`, city, zipCode: `${zip}${random.int(0, 9)}-${String(random.int(0, 999)).padStart(3, '0')}` });
  return `student ${student.id} moved`;
}

/** A student leaves the school: an archived one is deleted with its parent user, or one is archived first. */
function leave(students: readonly Student[], control: SandboxControl, random: Random): string {
  const archived = students.filter((s) => s.user.isArchived === 1);
  if (archived.length === 0) return `student ${control.archiveStudent(random.pick(students).id).id} archived`;
  const leaving = random.pick(archived);
  control.deleteStudent(leaving.id);
  if (leaving.user.parentUser) control.deleteUser(leaving.user.parentUser.id);
  return `student ${leaving.id} left`;
}

export interface Activity {
  start(): void;
  stop(): Promise<void>;
}

/** `size`: the number of students the school was seeded with (the sandbox's `students`). */
export function createActivity(options: { control: SandboxControl; random: Random; clock: Clock; log: Logger; intervalMs: number; size: number }): Activity {
  const { control, random, clock, log } = options;
  const stopping = new AbortController();
  let loop: Promise<void> | undefined;

  const run = async (): Promise<void> => {
    while (!stopping.signal.aborted) {
      try {
        await clock.sleep(options.intervalMs, stopping.signal);
      } catch {
        return;
      }
      try {
        log.debug({ change: performAction(pickAction(random.next()), control, random, options.size) }, 'sandbox activity');
      } catch (error) {
        log.warn({ error: describeError(error) }, 'sandbox activity failed');
      }
    }
  };

  return {
    start() {
      loop ??= run();
    },
    async stop() {
      stopping.abort(new Error('sandbox stopped'));
      await loop;
    },
  };
}
