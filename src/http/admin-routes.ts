import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { describeError, isBridgeError } from '../errors.js';

/** What the admin API can ask the daemon to do; each handler returns a JSON-able summary. */
export interface AdminHandlers {
  /** `body.dryRun`: diff and report only (schoolbridge sync --dry-run against a running daemon). */
  sync?: (body: { dryRun?: boolean }) => Promise<unknown>;
  export?: () => Promise<unknown>;
  retryDeliveries?: (body: { id?: string; allDead?: boolean }) => Promise<unknown>;
  releaseQuarantine?: (id: string) => Promise<unknown>;
  reprocessEvent?: (id: string) => Promise<unknown>;
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer (.+)$/.exec(header ?? '');
  if (!match) return false;
  const given = Buffer.from(match[1]!);
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * `/admin/*` (CONTRACT §5), behind `Authorization: Bearer <server.adminToken>`. With no token
 * configured the routes are not registered at all, so they answer 404 like any unknown path.
 */
export function registerAdminRoutes(http: FastifyInstance, token: string | undefined, handlers: AdminHandlers): void {
  if (!token) return;
  void http.register(async (admin) => {
    admin.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      if (!tokenMatches(request.headers.authorization, token)) {
        return reply.code(401).header('www-authenticate', 'Bearer').send({ error: 'unauthorized', message: 'admin routes need Authorization: Bearer <server.adminToken>' });
      }
    });
    const route = (path: string, run: (request: FastifyRequest) => Promise<unknown>) =>
      admin.post(path, async (request, reply) => {
        try {
          return reply.send(await run(request));
        } catch (error) {
          const status = isBridgeError(error) && error.code.endsWith('not_found') ? 404 : isBridgeError(error) && error.code.endsWith('busy') ? 409 : 500;
          return reply.code(status).send({ error: isBridgeError(error) ? error.code : 'failed', message: describeError(error) });
        }
      });
    const missing = (what: string) => async () => {
      throw new Error(`${what} is not available in this daemon`);
    };
    route('/admin/sync', (request) => (handlers.sync ?? missing('sync'))((request.body ?? {}) as { dryRun?: boolean }));
    route('/admin/export', handlers.export ?? missing('export'));
    route('/admin/deliveries/retry', (request) => (handlers.retryDeliveries ?? missing('retry'))((request.body ?? {}) as { id?: string; allDead?: boolean }));
    route('/admin/quarantine/:id/release', (request) => (handlers.releaseQuarantine ?? missing('quarantine'))((request.params as { id: string }).id));
    route('/admin/events/:id/reprocess', (request) => (handlers.reprocessEvent ?? missing('reprocess'))((request.params as { id: string }).id));
  });
}
