import type { Dispatcher } from 'undici';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { PolledStreamName, Student, StreamRecord } from '../streams/index.js';
import type { PagingSigns } from './list/paging.js';

/**
 * The typed contract of the API v2 client. Records are *normalized*: the "0"/"1" strings of
 * create/update responses are integers and `oneTimePassword` is gone (see normalize.ts). Unknown
 * fields are kept as received; values are never trimmed or "fixed" (docs/upstream.md).
 */

export type { AdditionalData, Student, User } from '../streams/index.js';

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
  /** The largest full list read, in bytes, decoded (config upstream.maxListBytes, default 1 GiB): past it the read fails `upstream.too_large`. */
  maxListBytes?: number;
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
  /**
   * GET one polled stream's full list (its path is in its description, src/streams/) and hand its
   * body, unread, to `read` (the poll parses it in the list worker). The same call as the others
   * (auth, retries, errors, lastContact): a retried attempt calls `read` again with the new body;
   * `read` rejects for a body it finds malformed or truncated. `paging` is what the answer's headers
   * say of pages (list/headers.ts), for the read to weigh with what its body says.
   */
  fetchList<T>(stream: PolledStreamName, read: (body: AsyncIterable<Uint8Array>, paging: PagingSigns) => Promise<T>, opts?: CallOptions): Promise<T>;
  /** The same list read whole into its records, in-process (list/read.ts): for tools and tests. */
  list<S extends PolledStreamName>(stream: S, opts?: CallOptions): Promise<StreamRecord<S>[]>;
  getStudent(id: number, opts?: CallOptions): Promise<Student>;
  createStudent(input: CreateStudentInput, opts?: CallOptions): Promise<StudentWriteResult>;
  updateStudent(id: number, input: UpdateStudentInput, opts?: CallOptions): Promise<StudentWriteResult>;
  listWebhooks(opts?: CallOptions): Promise<Webhook[]>;
  registerWebhook(event: string, callbackUrl: string, opts?: CallOptions): Promise<Webhook>;
  deleteWebhook(id: number, opts?: CallOptions): Promise<DeletedWebhook>;
  /** Last contact outcome, for /readyz (undefined before the first call finishes). */
  lastContact(): LastContact | undefined;
  /**
   * The calls (`GET /api/v2/students`, by method and path) whose last run failed as `lastContact`
   * counts a failure, with that failure: a list that fails every cycle stays here while other calls
   * succeed, until it succeeds again.
   */
  failingCalls(): FailingCall[];
}

export interface FailingCall extends LastContact {
  call: string;
}
