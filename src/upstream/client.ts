import { systemClock } from '../clock.js';
import { BridgeError, describeError } from '../errors.js';
import { call, type CallContext, type CallSpec } from './call.js';
import { pick, readJson } from './envelope.js';
import { createHttp, type BodyStream } from './http.js';
import { polledStream } from '../streams/index.js';
import { studentSchema } from '../streams/students.js';
import { headerPaging } from './list/headers.js';
import { answerPaging, refusePaged } from './list/paging.js';
import { readList } from './list/read.js';
import { extractOneTimePasswords, normalizeInPlace } from './normalize.js';
import { resolveRetryPolicy } from './retry.js';
import { deletedWebhookSchema, validate, webhookSchema } from './schemas.js';
import { createAuthorizer } from './authorize.js';
import { createStaticTokenSource } from './token.js';
import type {
  CallOptions, CreateStudentInput, LastContact, StudentWriteResult, UpdateStudentInput, UpstreamClient,
  UpstreamClientOptions,
} from './types.js';

/** Builds the API v2 client. Throws upstream.config when no credentials are given. */
export function createUpstreamClient(options: UpstreamClientOptions): UpstreamClient {
  const clock = options.clock ?? systemClock;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const http = createHttp({
    baseUrl: options.baseUrl,
    dispatcher: options.dispatcher,
    timeoutMs,
    formEncoding: options.formEncoding ?? 'multipart',
    now: () => clock.now(),
    secrets: 'token' in options.auth ? [options.auth.token] : [options.auth.clientSecret],
    ...(options.maxListBytes === undefined ? {} : { listLimitBytes: options.maxListBytes }),
  });
  const base: CallContext = {
    http,
    tokens: undefined,
    clock,
    policy: resolveRetryPolicy(options.retry),
    random: options.retry?.random ?? Math.random,
    log: options.log,
  };
  const ctx: CallContext = { ...base, tokens: tokenSource(options, base) };
  let last: LastContact | undefined;
  const failing = new Map<string, LastContact>();

  /** Runs a call and records whether the upstream answered sensibly (for /readyz). */
  async function tracked<T>(spec: CallSpec<T>): Promise<T> {
    try {
      const value = await call(ctx, spec);
      last = { ok: true, at: clock.now() };
      forgetFailures(failing, callName(spec));
      return value;
    } catch (error) {
      if (!(error instanceof BridgeError) || error.code !== 'upstream.aborted') {
        last = { ok: !isContactFailure(error), at: clock.now(), error: describeError(error), ...(error instanceof BridgeError ? { code: error.code } : {}) };
        if (last.ok) forgetFailures(failing, callName(spec));
        else failing.set(callName(spec), last);
      }
      throw error;
    }
  }

  const fetchList: UpstreamClient['fetchList'] = (stream, read, opts) =>
    tracked({ method: 'GET', path: polledStream(stream).list.path, safe: true, signal: opts?.signal, stream: true, read: (body: BodyStream, headers) => read(body, headerPaging(headers)) });

  const writeResult = async (body: BodyStream): Promise<StudentWriteResult> => {
    const raw = pick(await readJson(body), ['data', 'student'], 'object');
    const oneTimePasswords = extractOneTimePasswords(raw);
    return { student: validate(studentSchema, normalizeInPlace(raw), 'data.student'), oneTimePasswords };
  };

  return {
    fetchList,
    list: (stream, opts) => fetchList(stream, (body, paging) => readList(stream, body, { signal: opts?.signal, paging }), opts),
    getStudent: (id, opts) =>
      tracked({
        method: 'GET', path: '/api/v2/student', query: { id: String(id) }, safe: true, signal: opts?.signal,
        read: async (body) => validate(studentSchema, normalizeInPlace(pick(await readJson(body), ['data', 'student'], 'object')), 'data.student'),
      }),
    createStudent: (input: CreateStudentInput, opts?: CallOptions) =>
      tracked({
        method: 'POST', path: '/api/v2/student', safe: false, signal: opts?.signal, read: writeResult,
        form: { firstname: input.firstname, lastname: input.lastname, email: input.email, schoolId: String(input.schoolId) },
      }),
    updateStudent: (id: number, input: UpdateStudentInput, opts?: CallOptions) =>
      tracked({
        method: 'PATCH', path: '/api/v2/student', query: { id: String(id) }, safe: false, signal: opts?.signal, read: writeResult,
        form: definedFields(input),
      }),
    listWebhooks: (opts) =>
      tracked({
        method: 'GET', path: '/api/v2/webhooks', safe: true, signal: opts?.signal,
        read: async (body, headers) => {
          const answer = await readJson(body);
          const items = pick(answer, ['data', 'webhooks'], 'array') as unknown[];
          // A page of the registrations taken for all of them would make the reconcile register again.
          refusePaged('data.webhooks', answerPaging(answer, ['data', 'webhooks'], headerPaging(headers)), items.length);
          return items.map((item, i) => validate(webhookSchema, item, `data.webhooks[${i}]`));
        },
      }),
    registerWebhook: (event, callbackUrl, opts) =>
      tracked({
        method: 'POST', path: '/api/v2/webhook', form: { event, callbackUrl }, safe: false, signal: opts?.signal,
        read: async (body) => validate(webhookSchema, pick(await readJson(body), ['data', 'webhook'], 'object'), 'data.webhook'),
      }),
    // Deleting the same registration twice leaves the same state, so a lost answer may be retried.
    deleteWebhook: (id, opts) =>
      tracked({
        method: 'DELETE', path: '/api/v2/webhook', query: { id: String(id) }, safe: true, signal: opts?.signal,
        read: async (body) =>
          validate(deletedWebhookSchema, pick(await readJson(body), ['data', 'webhook'], 'object'), 'data.webhook'),
      }),
    lastContact: () => (last === undefined ? undefined : { ...last }),
    failingCalls: () => [...failing].map(([name, contact]) => ({ call: name, ...contact })).sort((a, b) => a.call.localeCompare(b.call)),
  };
}

function tokenSource(options: UpstreamClientOptions, ctx: CallContext) {
  const auth = options.auth as Partial<{ token: string; clientId: string; clientSecret: string }>;
  if (auth.token) return createStaticTokenSource(auth.token);
  if (auth.clientId && auth.clientSecret) return createAuthorizer(ctx, auth.clientId, auth.clientSecret);
  throw new BridgeError(
    'upstream.config',
    'no upstream credentials: set upstream.token, or both upstream.clientId and upstream.clientSecret',
    { context: { path: 'upstream.token' } },
  );
}

/** Only the fields the caller gave: an absent field must not blank the student's value. */
function definedFields(input: UpdateStudentInput): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of ['firstname', 'lastname', 'email'] as const) {
    const value = input[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * A 404 or a refused write still means the upstream is there and answering; these do not. Nor does
 * an error of ours met while its answer was read (the store that stages a list cannot write): the
 * upstream answered, and readiness must not send an operator to it.
 */
/** A call by its method and path, without its query (it may name a person). */
const callName = (spec: CallSpec<unknown>): string => `${spec.method} ${spec.path}`;

/**
 * Kinds of call made only when a listing before them says they are needed: the reconcile registers
 * or deletes a webhook after listing the registrations, and not again once a listing shows it done
 * (by a retry whose answer was lost, or by hand). Such a call's failure goes with the next listing
 * that succeeds: kept, it would hold /readyz at not ready for a call no longer made; still needed, it
 * runs again right after that listing, and a failure is kept again.
 */
const CLEARED_BY: Readonly<Record<string, readonly string[]>> = {
  'GET /api/v2/webhooks': ['POST /api/v2/webhook', 'DELETE /api/v2/webhook'],
};

/** A kind of call answered sensibly: its failure is over, and so are those of the calls it decides on. */
function forgetFailures(failing: Map<string, LastContact>, name: string): void {
  failing.delete(name);
  for (const decided of CLEARED_BY[name] ?? []) failing.delete(decided);
}

function isContactFailure(error: unknown): boolean {
  if (!(error instanceof BridgeError)) return true;
  if (!error.code.startsWith('upstream.')) return false;
  if (error.code === 'upstream.not_found') return false;
  if (error.code === 'upstream.http') return error.retryable;
  return true;
}
