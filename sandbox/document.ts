import type { Adapter } from 'lowdb';
import { BridgeError } from '../src/errors.js';
import type { Logger } from 'pino';
import type { SandboxCore } from './core.js';
import type { SavedDelivery } from './deliveries.js';
import type { SavedGroups } from './groups.js';
import type { SavedInvoices } from './invoices.js';
import type { SchoolRows } from './school.js';
import type { SavedWebhooks } from './webhook-registry.js';

/**
 * The simulated school as one JSON document (lowdb), so that a sandbox started again continues where
 * the last one stopped: the same students, users and groups with their changes, the invoices and the next
 * ids, the webhook registrations, the deliveries still under way, and the random generator's place.
 * The daemon keeps it at `store.dir/sandbox.json`; without an adapter nothing is kept.
 *
 * It is written after every change, one write at a time, the changes made meanwhile going into the
 * next (lowdb's JSONFile writes a temporary file and renames it, so the file is always whole). A
 * kill -9 loses at most the changes of the write under way.
 */
export const DOCUMENT_FORMAT = 1;

export interface SandboxDocument {
  format: typeof DOCUMENT_FORMAT;
  /** What the school was generated from: another seed or size generates a new one. */
  seed: number;
  students: number;
  random: number;
  school: SchoolRows;
  /** Absent in a document written before the sandbox had groups: its groups are the seeded ones. */
  groups?: SavedGroups;
  invoices: SavedInvoices;
  webhooks: SavedWebhooks;
  deliveries: SavedDelivery[];
}

/** While its writes fail (a full disk), the sandbox says so at most this often. */
const WARN_EVERY_MS = 60_000;

export interface Origin {
  seed: number;
  students: number;
}

export function documentOf(core: SandboxCore, origin: Origin): SandboxDocument {
  return {
    format: DOCUMENT_FORMAT, ...origin, random: core.random.state(), school: core.school.rows(), groups: core.groups.saved(),
    invoices: core.invoices.saved(), webhooks: core.webhooks.saved(), deliveries: core.deliverer.outstanding(),
  };
}

export interface DocumentKeeper {
  /** Restores a saved school made from the same origin, else saves the new one; says which. */
  load(): Promise<'restored' | 'new' | 'replaced'>;
  /** Resolves once every change so far is written. */
  flush(): Promise<void>;
}

export function createDocumentKeeper(options: { adapter: Adapter<SandboxDocument>; core: SandboxCore; origin: Origin; log: Logger }): DocumentKeeper {
  const { adapter, core, origin, log } = options;
  let writing: Promise<void> | undefined;
  let dirty = false;
  /** Writes that failed since the last warning, and when that was: one warning a minute while they go on. */
  let failedWrites = 0;
  let warnedAt = -Infinity;

  const write = (): void => {
    if (writing) {
      dirty = true;
      return;
    }
    dirty = false;
    writing = adapter
      .write(documentOf(core, origin))
      .then(() => {
        if (failedWrites > 0) log.info({ failedWrites }, 'the sandbox saves its school again');
        failedWrites = 0;
      }, (error: unknown) => {
        failedWrites += 1;
        if (Date.now() - warnedAt < WARN_EVERY_MS) return;
        warnedAt = Date.now();
        log.warn({ err: error, failedWrites }, 'the sandbox could not save its school; it tries again at each change');
      })
      .finally(() => {
        writing = undefined;
        if (dirty) write();
      });
  };

  return {
    async load() {
      const saved = await adapter.read();
      if (saved !== null) checkShape(saved);
      const same = saved?.format === DOCUMENT_FORMAT && saved.seed === origin.seed && saved.students === origin.students;
      if (saved && same) {
        try {
          core.school.restore(saved.school);
          if (saved.groups) core.groups.restore(saved.groups);
          core.invoices.restore(saved.invoices);
          core.webhooks.restore(saved.webhooks);
          core.random.restore(saved.random);
        } catch (error) {
          throw unreadable(error instanceof Error ? error.message : String(error), error);
        }
      }
      core.events.on('changed', write);
      if (saved && same) core.deliverer.resume(saved.deliveries);
      else write();
      if (saved && !same) log.info({ was: { seed: saved.seed, students: saved.students }, now: origin }, 'sandbox.seed or sandbox.students changed: the simulated school starts anew');
      return saved ? (same ? 'restored' : 'replaced') : 'new';
    },
    async flush() {
      while (writing) await writing;
    },
  };
}

/** A saved school that cannot be restored stops the start; it is never overwritten, so nothing in it is lost before someone looked. */
function unreadable(reason: string, cause?: unknown): BridgeError {
  return new BridgeError('sandbox.document_unreadable', `the sandbox's saved school cannot be restored (${reason}); move its file away to start a new school`, cause === undefined ? {} : { cause });
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * What load reads before it restores anything: the document's frame. A document of another format is
 * refused rather than replaced (a newer version's school is not this one's to throw away).
 */
function checkShape(saved: unknown): void {
  if (!isObject(saved)) throw unreadable('not a JSON object');
  if (saved.format !== DOCUMENT_FORMAT) throw unreadable(`its format is ${JSON.stringify(saved.format) ?? 'missing'}, and this version reads ${DOCUMENT_FORMAT}`);
  const wrong: string[] = [
    ...['seed', 'students', 'random'].filter((key) => typeof saved[key] !== 'number'),
    ...['school', 'invoices', 'webhooks'].filter((key) => !isObject(saved[key])),
    ...(Array.isArray(saved.deliveries) ? [] : ['deliveries']),
  ];
  const school = saved.school;
  if (isObject(school)) wrong.push(...['students', 'users'].filter((key) => !Array.isArray(school[key])).map((key) => `school.${key}`));
  if (wrong.length > 0) throw unreadable(`${wrong.join(', ')} missing or of the wrong type`);
}
