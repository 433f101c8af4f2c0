import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ZodError } from 'zod';
import { isBridgeError } from '../src/errors.js';
import { bearerGuard, registerAuthorize } from './auth-routes.js';
import { registerApiRoutes } from './api-routes.js';
import { registerControlRoutes } from './control-routes.js';
import { requestKey, type SandboxCore } from './core.js';
import { parseMultipart, parseUrlEncoded } from './form.js';
import { errorForStatus, nestedError } from './http-errors.js';
import { sendError, setPendingFault } from './reply.js';
import type { SandboxControl } from './types.js';

/** The request count of a path no route answers. */
const NO_ROUTE = '(no route)';

/**
 * The sandbox's HTTP app (never listens itself): form parsers, request counting and faults, the API
 * routes behind the bearer check, the control API, and error answers in the service's shapes.
 */
export async function buildServer(core: SandboxCore, control: SandboxControl, log: Logger, stopping: AbortSignal): Promise<FastifyInstance> {
  // 64 MB: the largest body anyone sends is a control call; the limit only guards against accidents.
  const app = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });
  app.addContentTypeParser('multipart/form-data', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      done(null, parseMultipart(body as Buffer, request.headers['content-type'] ?? ''));
    } catch (error) {
      done(Object.assign(error as Error, { statusCode: 400 }), undefined);
    }
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, parseUrlEncoded(body as string));
  });
  app.addHook('onRequest', async (request, reply) => {
    const path = request.url.split('?')[0] ?? request.url;
    // Counted by route (`/_sandbox/invoices/:id`), not by path: a count per invoice id, or per path a
    // client made up, would grow for as long as the sandbox runs.
    const key = requestKey(request.method, request.routeOptions.url ?? NO_ROUTE);
    core.requestCounts.set(key, (core.requestCounts.get(key) ?? 0) + 1);
    core.events.emit('request', { method: request.method, path, url: request.url, at: new Date(core.clock.now()).toISOString() });
    return applyFaults(core, request, reply, path, stopping);
  });
  app.setErrorHandler((error, request, reply) => answerError(error, request, reply, log));
  app.setNotFoundHandler((request, reply) => sendError(reply, nestedError(404, 'notFound', `Route ${request.method} ${request.url.split('?')[0]} was not found`)));
  registerAuthorize(app, core);
  await app.register(async (api) => {
    api.addHook('onRequest', bearerGuard(core));
    registerApiRoutes(api, core);
  });
  registerControlRoutes(app, control, core);
  return app;
}

async function applyFaults(core: SandboxCore, request: FastifyRequest, reply: FastifyReply, path: string, stopping: AbortSignal): Promise<FastifyReply | undefined> {
  const { latencyMs, fault } = core.faults.take(request.method, path);
  if (latencyMs > 0) await core.clock.sleep(latencyMs, stopping);
  if (!fault) return undefined;
  switch (fault.kind) {
    case 'status':
      if (fault.retryAfterSeconds !== undefined) reply.header('retry-after', String(fault.retryAfterSeconds));
      return sendError(reply, errorForStatus(fault.status, fault.message));
    case 'rateLimit':
      reply.header('retry-after', String(fault.retryAfterSeconds ?? 1));
      return sendError(reply, errorForStatus(429));
    case 'malformedJson':
      return reply.code(200).type('application/json; charset=utf-8').send('{"data": {"students": [{"id": 1,, oops');
    case 'body':
      return reply.code(fault.status ?? 200).type('application/json; charset=utf-8')
        .send(typeof fault.body === 'string' ? fault.body : JSON.stringify(fault.body));
    case 'reset':
      reply.hijack();
      request.raw.socket.destroy();
      return reply;
    default:
      // truncatedJson and emptyList shape the route's own answer.
      setPendingFault(request, fault);
      return undefined;
  }
}

function answerError(error: unknown, request: FastifyRequest, reply: FastifyReply, log: Logger): FastifyReply {
  if (error instanceof ZodError) {
    const issue = error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join('.') : 'body';
    return sendError(reply, nestedError(400, 'invalidRequest', `${where}: ${issue?.message ?? 'invalid'}`));
  }
  if (isBridgeError(error) && error.status) return sendError(reply, nestedError(error.status, 'notFound', error.message));
  const status = (error as { statusCode?: unknown }).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return sendError(reply, nestedError(status, status === 413 ? 'payloadTooLarge' : 'invalidRequest', (error as Error).message));
  }
  log.error({ err: error, url: request.url }, 'sandbox route failed');
  return sendError(reply, nestedError(500, 'internalError', 'Internal server error'));
}
