import type { Logger } from 'pino';
import type { Clock } from '../src/clock.js';
import { describeError } from '../src/errors.js';
import { CITIES, STREETS } from './names.js';
import { makePerson } from './people.js';
import type { Random } from './prng.js';
import type { SandboxControl } from './types.js';

/**
 * A living school for demos (`--activity`): every `intervalMs` one plausible change — a new student,
 * a rename or move, an archival, a new or paid invoice. Driven by the seeded Random, so a run with
 * the same seed and clock makes the same changes.
 */
export type ActivityAction = 'newStudent' | 'rename' | 'move' | 'archive' | 'newInvoice' | 'updateInvoice';

const WEIGHTS: readonly [ActivityAction, number][] = [
  ['newStudent', 25], ['rename', 15], ['move', 15], ['archive', 10], ['newInvoice', 25], ['updateInvoice', 10],
];

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

export function performAction(action: ActivityAction, control: SandboxControl, random: Random): string {
  const students = control.students();
  const student = students.length > 0 ? random.pick(students) : undefined;
  const invoices = action === 'updateInvoice' ? control.invoices() : [];
  if (action === 'newInvoice' || (action === 'updateInvoice' && invoices.length === 0)) {
    return `invoice ${control.createInvoice().id} created`;
  }
  if (action === 'updateInvoice') {
    const invoice = random.pick(invoices);
    control.updateInvoice(invoice.id, { statusOffice: 2, statusOfficeName: 'paid', daysOutdated: 0 });
    return `invoice ${invoice.id} updated`;
  }
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

export interface Activity {
  start(): void;
  stop(): Promise<void>;
}

export function createActivity(options: { control: SandboxControl; random: Random; clock: Clock; log: Logger; intervalMs: number }): Activity {
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
        log.debug({ change: performAction(pickAction(random.next()), control, random) }, 'sandbox activity');
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
