import type { Dispatcher } from 'undici';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';

/**
 * The typed contract of the API v2 client. Records are *normalized*: the "0"/"1" strings of
 * create/update responses are integers and `oneTimePassword` is gone (see normalize.ts). Unknown
 * fields are kept as received; values are never trimmed or "fixed" (docs/upstream.md).
 */

/** API v2 user (also a student's `user` and its `parentUser`). Unknown fields are kept. */
export interface User {
  id: number;
  login?: string | null;
  name?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  fullname?: string | null;
  systemRole?: string | null;
  isArchived?: number | null;
  language?: string | null;
  additionalData?: AdditionalData | null;
  parentUser?: User | null;
  createdAt?: string | null;
  updatedAt?: string | null;
  [field: string]: unknown;
}

export interface AdditionalData {
  id?: number | null;
  phone?: string | null;
  mobile?: string | null;
  email?: string | null;
  street?: string | null;
  zipCode?: string | null;
  city?: string | null;
  [field: string]: unknown;
}

export interface Student {
  id: number;
  isAdult?: number | null;
  isActive?: number | null;
  createdAt?: string | null;
  updatedAt?: string | null;
  user: User;
  [field: string]: unknown;
}

export interface Webhook {
  id: number;
  event: string;
  callbackUrl: string;
  createdAt?: string | null;
  updatedAt?: string | null;
  [field: string]: unknown;
}

export interface DeletedWebhook {
  id: number;
  isDeleted?: boolean;
  deletedAt?: string | null;
  [field: string]: unknown;
}

export interface CreateStudentInput {
  firstname: string;
  lastname: string;
  email: string;
  schoolId: number | string;
}

export interface UpdateStudentInput {
  firstname?: string;
  lastname?: string;
  email?: string;
}

/** A create/update answer: the normalized student, and the one-time passwords for the caller only. */
export interface StudentWriteResult {
  student: Student;
  oneTimePasswords: { student?: string; parent?: string };
}

export interface RetryOptions {
  /** Attempts in all, the first included (default 5). */
  maxAttempts?: number;
  /** First back-off step (default 250 ms); doubles per attempt, full jitter. */
  baseMs?: number;
  /** Cap of one back-off step, and of an honoured Retry-After (default 30 000 ms). */
  maxMs?: number;
  /** No new attempt starts later than this after the first (default 120 000 ms). */
  maxElapsedMs?: number;
  /** [0, 1) source for jitter; Math.random by default. */
  random?: () => number;
}

export interface UpstreamClientOptions {
  /** e.g. http://127.0.0.1:8090 (no trailing /api/v2). */
  baseUrl: string;
  auth: { token: string } | { clientId: string; clientSecret: string };
  /** One Agent in production (keep-alive, see createUpstreamAgent), loopback/MockAgent in tests. */
  dispatcher: Dispatcher;
  clock?: Clock;
  log?: Logger;
  /** Overall limit of one attempt, headers and body (config upstream.timeoutMs, default 30 000). */
  timeoutMs?: number;
  /** Connect timeout: a property of the Agent; used by createUpstreamAgent, ignored with a passed dispatcher. */
  connectTimeoutMs?: number;
  retry?: RetryOptions;
  /** Encoding of write bodies; the service accepts both (default multipart, as the spec documents). */
  formEncoding?: 'multipart' | 'urlencoded';
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface LastContact {
  ok: boolean;
  /** Epoch ms (clock.now()) when the call finished. */
  at: number;
  error?: string;
  /** The failure's stable code (`upstream.auth`: the credentials are refused). */
  code?: string;
}

export interface UpstreamClient {
  listStudents(opts?: CallOptions): Promise<Student[]>;
  listUsers(opts?: CallOptions): Promise<User[]>;
  /**
   * GET one full list and hand its body, unread, to `read` (the poll parses it in a worker thread).
   * The same call as the others (auth, retries, errors, lastContact): a retried attempt calls `read`
   * again with the new body; `read` rejects for a body it finds malformed or truncated.
   */
  fetchList<T>(list: 'students' | 'users', read: (body: AsyncIterable<Uint8Array>) => Promise<T>, opts?: CallOptions): Promise<T>;
  getStudent(id: number, opts?: CallOptions): Promise<Student>;
  createStudent(input: CreateStudentInput, opts?: CallOptions): Promise<StudentWriteResult>;
  updateStudent(id: number, input: UpdateStudentInput, opts?: CallOptions): Promise<StudentWriteResult>;
  listWebhooks(opts?: CallOptions): Promise<Webhook[]>;
  registerWebhook(event: string, callbackUrl: string, opts?: CallOptions): Promise<Webhook>;
  deleteWebhook(id: number, opts?: CallOptions): Promise<DeletedWebhook>;
  /** Last contact outcome, for /readyz (undefined before the first call finishes). */
  lastContact(): LastContact | undefined;
}
