import type { Adapter } from 'lowdb';
import type { Logger } from 'pino';
import type { Clock } from '../src/clock.js';
import type { SandboxDocument } from './document.js';
import type { Group, GroupPatch } from './groups.js';

export type { Group, GroupPatch } from './groups.js';

/**
 * The public shape of the sandbox: a simulated API v2 upstream. Resource shapes follow
 * docs/upstream.md exactly (key order included); in-process callers get deep copies in the *list* shape
 * (integer flags, no one-time passwords).
 */

/** `YYYY-MM-DD HH:MM:SS` (docs/upstream.md "General conventions"). */
export type DateTime = string;
export type Flag = 0 | 1;

export interface AdditionalData {
  id: number | null;
  phone: string | null;
  mobile: string | null;
  email: string | null;
  skype: string | null;
  street: string | null;
  zipCode: string | null;
  city: string | null;
  // The fields below are only ever null upstream; their types are "not shown".
  country: unknown;
  post: unknown;
  province: unknown;
  pesel: unknown;
  nipNumber: unknown;
  birthDate: unknown;
  birthPlace: unknown;
  description: unknown;
  billingName: unknown;
  billingStreet: unknown;
  billingCity: unknown;
  billingZipCode: unknown;
  billingNipNumber: unknown;
  billingPesel: unknown;
  billingEmail: unknown;
  createdAt: DateTime | null;
  updatedAt: DateTime | null;
}

export type SystemRole = 'student' | 'parent' | 'administrator';

export interface User {
  id: number;
  login: string;
  name: string | null;
  firstName: string | null;
  lastName: string | null;
  fullname: string | null;
  systemRole: SystemRole;
  isArchived: Flag;
  photo: null;
  language: string;
  tosAccepted: Flag | null;
  type: number | null;
  typeName: string | null;
  createdAt: DateTime | null;
  updatedAt: DateTime;
  additionalData: AdditionalData;
  parentUser: User | null;
}

export interface Student {
  id: number;
  isAdult: Flag;
  isActive: Flag;
  createdAt: DateTime;
  updatedAt: DateTime;
  user: User;
}

export interface Webhook {
  id: number;
  event: string;
  callbackUrl: string;
  createdAt: DateTime;
  updatedAt: DateTime;
}

export interface DeletedWebhook {
  id: number;
  isDeleted: true;
  deletedAt: DateTime;
}

/** The invoice object of `invoice.*` events; extra fields given by a caller pass through unchanged. */
export interface Invoice {
  id: number;
  userId: number;
  paymentFormId: number;
  date: DateTime;
  soldAt: DateTime;
  paidAt: DateTime;
  deliveredAt: DateTime;
  dayLimit: number;
  place: string;
  statusOffice: number;
  statusPrint: number;
  statusOfficeName: string;
  statusPrintName: string;
  daysOutdated: number | null;
  numberId: number;
  description: string;
  creatorUserId: number;
  schoolId: number;
  connectedId: number;
  createdAt: DateTime;
  updatedAt: DateTime;
  currencyExchange: unknown;
  [extra: string]: unknown;
}

/** What a control call may set on a student or user (camel-case, like responses). */
export interface PersonPatch {
  firstName?: string | null;
  lastName?: string | null;
  email?: string | null;
  phone?: string | null;
  mobile?: string | null;
  street?: string | null;
  zipCode?: string | null;
  city?: string | null;
  language?: string;
  login?: string;
}

export interface StudentPatch extends PersonPatch {
  isActive?: Flag;
  isAdult?: Flag;
  isArchived?: Flag;
}

export interface UserPatch extends PersonPatch {
  isArchived?: Flag;
}

export interface StudentInput extends PersonPatch {
  schoolId?: number;
  isAdult?: Flag;
}

/**
 * A fault injected into the next request(s) of `route`. `route` is `"GET /api/v2/students"` (method and
 * path) or a bare path (any method); absent = every `/api/v2/` route. `times` defaults to 1;
 * `'always'` keeps it until `clearFaults()`. Latency combines with one other fault on the same request.
 */
export type Fault = { route?: string; times?: number | 'always' } & FaultKind;

export type FaultKind =
  | { kind: 'latency'; ms: number }
  /** Answers `status` with an error body of the fitting shape (flat OAuth for 401/403, nested otherwise). */
  | { kind: 'status'; status: number; retryAfterSeconds?: number; message?: string }
  /** 429 with `Retry-After: <retryAfterSeconds>` (default 1). */
  | { kind: 'rateLimit'; retryAfterSeconds?: number }
  /** 200 with a body that is not JSON. */
  | { kind: 'malformedJson' }
  /** 200 with the real body cut in half (Content-Length matches the cut body). */
  | { kind: 'truncatedJson' }
  /** The socket is destroyed without an answer. */
  | { kind: 'reset' }
  /** List routes answer their envelope with an empty array. */
  | { kind: 'emptyList' }
  /** Any raw answer, e.g. a missing `data` key or a string id: a string is sent as is, else JSON. */
  | { kind: 'body'; body: unknown; status?: number };

/** One delivery attempt (the delivery log). */
export interface DeliveryAttempt {
  deliveryId: number;
  webhookId: number;
  event: string;
  url: string;
  /** 1-based. */
  attempt: number;
  /** ISO 8601 time the attempt started (sandbox clock). */
  at: string;
  /** HTTP status when the callback answered. */
  status: number | null;
  /** Network error or timeout, when it did not. */
  error: string | null;
  /** `delivered` on 200, `retry` when another attempt is scheduled, `failed` when the window is over or the sandbox stopped. */
  outcome: 'delivered' | 'retry' | 'failed';
  /** Delay before the next attempt (already time-scaled), when `outcome` is `retry`. */
  nextAttemptInMs: number | null;
  /** The exact header and body sent, so a test can verify the signature independently. */
  signatureHeader: string;
  body: string;
}

export interface RequestInfo {
  method: string;
  /** Path without the query string. */
  path: string;
  url: string;
  at: string;
}

export interface IssuedToken {
  access_token: string;
  expires_in: number;
  token_type: 'Bearer';
  scope: 'administrator';
}

export interface SandboxEvents {
  delivery: (attempt: DeliveryAttempt) => void;
  request: (request: RequestInfo) => void;
}

/** The in-process twin of the `/_sandbox/` control API. Unknown ids throw BridgeError `sandbox.not_found`. */
export interface SandboxControl {
  createInvoice(fields?: Record<string, unknown>): Invoice;
  updateInvoice(id: number, fields: Record<string, unknown>): Invoice;
  invoices(): Invoice[];
  /** Forgets an invoice (fires nothing): a later update of it is `sandbox.not_found`. */
  forgetInvoice(id: number): void;
  /** Delivers `{event, object}` to every registration of `event`; returns the number of deliveries started. */
  fireEvent(event: string, object: unknown): number;
  createStudent(input?: StudentInput): Student;
  updateStudent(id: number, patch: StudentPatch): Student;
  archiveStudent(id: number): Student;
  deleteStudent(id: number): void;
  updateUser(id: number, patch: UserPatch): User;
  archiveUser(id: number): User;
  deleteUser(id: number): void;
  students(): Student[];
  student(id: number): Student | undefined;
  users(): User[];
  /** The groups (`GET /api/v2/groups`), and changes to them. */
  groups(): Group[];
  createGroup(fields?: GroupPatch): Group;
  updateGroup(id: number, patch: GroupPatch): Group;
  deleteGroup(id: number): void;
  webhooks(): Webhook[];
  injectFault(fault: Fault): void;
  clearFaults(): void;
  faults(): Fault[];
  /** Issues a token as `/api/v2/authorize` would (optionally with another lifetime). */
  issueToken(ttlSeconds?: number): IssuedToken;
  /** Every token issued so far (and the static one) now gets 401. */
  revokeTokens(): void;
  /** Every token issued so far expires now (401 `invalid_token` … expired). */
  expireTokens(): void;
  deliveryLog(): DeliveryAttempt[];
  /** Cuts every pending back-off short (next attempt now) and waits for those attempts. */
  flushDeliveries(): Promise<void>;
  /** Resolves when no delivery is in flight or waiting for a retry. */
  idle(): Promise<void>;
  requestCount(method: string, path: string): number;
  on<E extends keyof SandboxEvents>(event: E, listener: SandboxEvents[E]): () => void;
  off<E extends keyof SandboxEvents>(event: E, listener: SandboxEvents[E]): void;
  /** Resolves with the first event that satisfies `predicate` (no sleeping in tests). */
  waitFor<E extends keyof SandboxEvents>(event: E, predicate?: (value: Parameters<SandboxEvents[E]>[0]) => boolean): Promise<Parameters<SandboxEvents[E]>[0]>;
}

export interface SandboxOptions {
  host?: string;            // default 127.0.0.1
  port?: number;            // default 0 (ephemeral); the CLI default is 8090
  students?: number;        // default 50; seeded students, each with a student user and a parent user
  seed?: number;            // default 1; same seed → same data
  clientId?: string;        // default 'sandbox-client'
  clientSecret?: string;    // default 'sandbox-secret' — also the webhook signing secret
  staticToken?: string;     // optional extra bearer token always accepted (until revokeTokens())
  tokenTtlSeconds?: number; // default 2592000
  retryTimeScale?: number;  // multiplies the delivery back-off schedule; 1 = real (up to 3 days); e.g. 0.0001 for tests
  deliveryTimeoutMs?: number; // per delivery attempt, default 10000
  activity?: false | { intervalMs: number }; // a living school: new students, edits, archivals, invoices
  /** Where the school is kept between runs (document.ts); absent: nothing is kept. */
  document?: Adapter<SandboxDocument>;
  clock?: Clock;            // from src/clock.ts, default systemClock
  log?: Logger;
}

export interface Sandbox {
  start(): Promise<void>;   // listens; idempotent
  stop(): Promise<void>;    // stops listening, timers, pending delivery retries; idempotent
  readonly url: string;     // e.g. http://127.0.0.1:54321 (valid after start)
  readonly control: SandboxControl;
}
