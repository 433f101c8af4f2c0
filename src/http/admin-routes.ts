import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { describeError, isBridgeError } from '../errors.js';

/** An admin action's answer: a status and a JSON body. */
export interface AdminReply {
  status: number;
  body: unknown;
}

/** `POST <path>` → handler(JSON body). A handler returns a reply, or a plain value (200). */
export type AdminHandlers = Record<string, (body: Record<string, unknown>) => Promise<AdminReply | unknown> | AdminReply | unknown>;

/** Whether an Authorization header carries the token (compared in constant time). */
export function tokenMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer (.+)$/.exec(header ?? '');
  if (!match) return false;
  const given = Buffer.from(match[1]!);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const isReply = (value: unknown): value is AdminReply =>
  typeof value === 'object' && value !== null && typeof (value as AdminReply).status === 'number' && 'body' in value && Object.keys(value).length === 2;

function statusOf(error: unknown): number {
  if (!isBridgeError(error)) return 500;
  if (/not_found$/.test(error.code)) return 404;
  if (/busy$|locked$/.test(error.code)) return 409;
  if (/invalid|bad_request/.test(error.code)) return 400;
  return 500;
}

/**
 * `/admin/*` (README "Observe"), behind `Authorization: Bearer <server.adminToken>`. With no token
 * configured the routes are not registered at all, so they answer 404 like any unknown path.
 */
export function registerAdminRoutes(http: FastifyInstance, token: string | undefined, handlers: AdminHandlers): void {
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
        const body = typeof request.body === 'object' && request.body !== null ? (request.body as Record<string, unknown>) : {};
        try {
          const result = await handler(body);
          return isReply(result) ? reply.code(result.status).send(result.body) : reply.send(result ?? {});
        } catch (error) {
          return reply.code(statusOf(error)).send({ error: isBridgeError(error) ? error.code : 'failed', message: describeError(error) });
        }
      });
    }
  });
}
