import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { describeError, isBridgeError } from '../errors.js';

/** An admin action's answer: a status and a JSON body. */
export interface AdminReply {
  status: number;
  body: unknown;
}

/** `POST <path>` → handler(JSON body, `{}` when none was sent). A handler returns a reply, or a plain value (200). */
export type AdminHandler = (body: unknown) => Promise<AdminReply | unknown> | AdminReply | unknown;
export type AdminHandlers = Record<string, AdminHandler>;

/**
 * A handler whose body must have the schema's shape: anything else (a misspelt key, `"dryRun":
 * "true"`, a string where a list goes) is answered 400 with `usage` before anything runs, never read
 * as the default. These actions delete registrations and send records: a dry run asked for in the
 * wrong shape must not run for real.
 */
export function withBody<T>(schema: z.ZodType<T>, usage: string, run: (body: T) => ReturnType<AdminHandler>): AdminHandler {
  return (body) => {
    const parsed = schema.safeParse(body);
    if (parsed.success) return run(parsed.data);
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
    return { status: 400, body: { error: 'bad_request', message: `${where}${issue.message}; send ${usage}` } };
  };
}

/** Whether a request's body came as JSON: the only body these routes read. */
const sentAsJson = (request: FastifyRequest) => /^application\/json\s*(;|$)/i.test(request.headers['content-type'] ?? '');

/** Whether an Authorization header carries the token (compared in constant time). */
export function tokenMatches(header: string | undefined, token: string): boolean {
  // The scheme's name is case-insensitive (RFC 9110, 11.1).
  const match = /^Bearer (.+)$/i.exec(header ?? '');
  if (!match) return false;
  const given = Buffer.from(match[1]!);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const isReply = (value: unknown): value is AdminReply =>
  typeof value === 'object' && value !== null && typeof (value as AdminReply).status === 'number' && 'body' in value && Object.keys(value).length === 2;

/** How long a client is asked to wait before it sends again an action the store could not take now. */
const STORE_RETRY_AFTER_S = 5;

/**
 * The HTTP status of a failed action: 409 for what changed meanwhile (running it again may succeed),
 * 503 for a store that cannot write now (and recovers by itself), 500 for the rest.
 */
function statusOf(error: unknown): number {
  return isBridgeError(error) ? statusOfCode(error.code, error.retryable) : 500;
}

function statusOfCode(code: string, retryable: boolean): number {
  if (/not_found$/.test(code)) return 404;
  if (/busy$|locked$|conflict$/.test(code)) return 409;
  if (/invalid|bad_request/.test(code)) return 400;
  if (code.startsWith('store.') && retryable) return 503;
  return 500;
}

/**
 * What an action that reports its outcome (a poll cycle, a roster export) answers: 200 when it
 * succeeded; else the status of its error code (the store's `store.unavailable` is 503, with
 * Retry-After), the code and message first, and the whole report after them, which the CLI prints.
 */
export function outcomeReply<R extends { outcome: string; reason?: string | undefined; message?: string | undefined }>(result: R): AdminReply | R {
  if (result.outcome === 'ok') return result;
  const code = result.reason ?? `${result.outcome}`;
  return { status: statusOfCode(code, code === 'store.unavailable'), body: { error: code, message: result.message ?? code, ...result } };
}

/**
 * `/admin/*` (README "Observe"), behind `Authorization: Bearer <server.adminToken>`. With no token
 * configured the routes are not registered at all, so they answer 404 like any unknown path.
 */
export function registerAdminRoutes(
  http: FastifyInstance,
  token: string | undefined,
  handlers: AdminHandlers,
  /** An answer that refuses every action now, before it starts (a store that answers nothing: 503). */
  refuse: () => AdminReply | undefined = () => undefined,
): void {
  if (!token) return;
  void http.register(async (admin) => {
    admin.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      if (!tokenMatches(request.headers.authorization, token)) {
        return reply
          .code(401)
          .header('www-authenticate', 'Bearer')
          .send({ error: 'unauthorized', message: 'admin routes need Authorization: Bearer <server.adminToken>' });
      }
    });
    for (const [path, handler] of Object.entries(handlers)) {
      admin.post(path, async (request, reply) => {
        // A body of another type (text/plain) was never parsed: it is refused, not dropped for `{}`.
        if (request.body !== undefined && !sentAsJson(request)) {
          return reply.code(415).send({ error: 'unsupported_media_type', message: 'send the body as JSON, with Content-Type: application/json' });
        }
        const body = request.body ?? {};
        try {
          const result = refuse() ?? (await handler(body));
          if (!isReply(result)) return reply.send(result ?? {});
          if (result.status === 503) reply.header('retry-after', String(STORE_RETRY_AFTER_S));
          return reply.code(result.status).send(result.body);
        } catch (error) {
          const status = statusOf(error);
          if (status === 503) reply.header('retry-after', String(STORE_RETRY_AFTER_S));
          // The code goes in `error`; the message does not say it again.
          const [code, message] = isBridgeError(error) ? [error.code, error.message] : ['failed', describeError(error)];
          return reply.code(status).send({ error: code, message });
        }
      });
    }
  });
}
