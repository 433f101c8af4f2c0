import { EventEmitter } from 'node:events';
import type { Clock } from '../src/clock.js';
import { formatDateTime } from './dates.js';
import type { Deliverer } from './deliveries.js';
import { createFaultBook, type FaultBook } from './faults.js';
import { createGroupBook, type GroupBook } from './groups.js';
import { createInvoiceBook, type InvoiceBook } from './invoices.js';
import { createRandom, type Random } from './prng.js';
import { SchoolState } from './school.js';
import { createTokenStore, type TokenStore } from './tokens.js';
import { createWebhookRegistry, type WebhookRegistry } from './webhook-registry.js';

/**
 * Everything the sandbox knows, shared by the API routes, the control API (HTTP and in-process) and
 * the activity loop. One object, so the three can never disagree. Every change of the school, the
 * invoices, the registrations and the deliveries under way is announced as a `changed` event (the
 * sandbox's document is written after it).
 */
export interface SandboxCore {
  school: SchoolState;
  groups: GroupBook;
  tokens: TokenStore;
  webhooks: WebhookRegistry;
  invoices: InvoiceBook;
  faults: FaultBook;
  deliverer: Deliverer;
  /** Seeded: activity and invented records are reproducible too. */
  random: Random;
  clock: Clock;
  events: EventEmitter;
  requestCounts: Map<string, number>;
  clientId: string;
  clientSecret: string;
  /** The current time in the upstream's format. */
  now(): string;
  /** Starts a delivery to each registration of `event`; returns how many. */
  fire(event: string, object: unknown): number;
}

export interface CoreOptions {
  seed: number;
  students: number;
  clientId: string;
  clientSecret: string;
  staticToken: string | undefined;
  tokenTtlSeconds: number;
  clock: Clock;
  deliverer: Deliverer;
}

export function createCore(options: CoreOptions): SandboxCore {
  const { clock, deliverer } = options;
  const events = new EventEmitter();
  // Tests may attach many waiters at once; the default of 10 would only print a warning.
  events.setMaxListeners(0);
  const changed = () => events.emit('changed');
  const webhooks = createWebhookRegistry(changed);
  const school = new SchoolState(options.seed, options.students);
  school.changed = changed;
  return {
    school,
    groups: createGroupBook(options.seed, changed),
    tokens: createTokenStore({ clock, ttlSeconds: options.tokenTtlSeconds, staticToken: options.staticToken }),
    webhooks,
    invoices: createInvoiceBook(changed),
    faults: createFaultBook(),
    deliverer,
    random: createRandom(options.seed + 0x51ed),
    clock,
    events,
    requestCounts: new Map(),
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    now: () => formatDateTime(clock.now()),
    fire(event, object) {
      const targets = webhooks.forEvent(event);
      for (const target of targets) deliverer.deliver(target, event, object);
      return targets.length;
    },
  };
}

export const requestKey = (method: string, path: string): string => `${method.toUpperCase()} ${path}`;
