import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Intake, IntakeAnswer } from './intake.js';
import type { IntakeMetrics, RejectReason } from './intake-metrics.js';
import type { IntakeLoad } from './intake-load.js';

export const WEBHOOK_PATH = '/webhooks/v2';
const OTHER_METHODS = ['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'] as const;

export interface WebhookRouteOptions {
  intake: Intake;
  /** Largest body accepted (webhooks.bodyLimitBytes); beyond it 413, decided before buffering when Content-Length says so. */
  bodyLimitBytes: number;
  metrics: IntakeMetrics;
  log: Logger;
  /** Told of each delivery being handled, so the outbox can let a burst of them go first. */
  load?: IntakeLoad;
}

/**
 * `POST /webhooks/v2` (webhooks/README.md). An encapsulated plugin, so its catch-all raw-bytes
 * parser and error handler touch no other route. The upstream does not document the delivery's
 * content type, and we verify bytes, not media types: any Content-Type, a malformed one or none is read
 * the same way, as raw bytes.
 */
export function registerWebhookRoute(http: FastifyInstance, options: WebhookRouteOptions): void {
  const { intake, bodyLimitBytes: limit, metrics, log, load } = options;
  void http.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: limit }, (_request, body, done) => done(null, body));
    // Callback hooks, not async ones: no promise per delivery on the hot path.
    scope.addHook('onResponse', (_request, reply, done) => {
      metrics.ackSeconds.observe({ status: String(reply.statusCode) }, reply.elapsedTime / 1000);
      done();
    });
    scope.setErrorHandler((error: FastifyError, request, reply) => answerError(error, request, reply, metrics, log));
    // With a trailing slash too: a service may store the callback URL so (reconcile-plan.ts, sameUrl).
    for (const url of [WEBHOOK_PATH, `${WEBHOOK_PATH}/`]) {
      scope.route({
        method: 'POST',
        url,
        bodyLimit: limit,
        onRequest: (request, reply, done) => {
          if (Number(request.headers['content-length']) > limit) {
            tooLarge(reply, metrics);
            return;
          }
          // The signature is over the bytes as sent, and API v2 shows no compression: a compressed body
          // would only fail later as "not UTF-8" or a mismatch, which names the wrong thing.
          const encoding = request.headers['content-encoding']?.trim().toLowerCase();
          if (encoding && encoding !== 'identity') {
            refuseUnread(reply, metrics, 415, 'encoding', { detail: `Content-Encoding ${encoding.slice(0, 40)} is not read: send the body uncompressed` });
            return;
          }
          // A missing or malformed signature is answered before any byte of the body is read or held.
          const early = intake.screen(request.headers['webhook-signature']);
          if (early) {
            send(reply.header('connection', 'close'), early);
            return;
          }
          // Fastify answers 415 to a malformed Content-Type before any parser runs; ours are all bytes.
          if (request.headers['content-type'] !== undefined) request.headers['content-type'] = 'application/octet-stream';
          done();
        },
        handler: async (request: FastifyRequest, reply: FastifyReply) => {
          const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
          load?.enter();
          try {
            return send(reply, await intake.receive(request.headers['webhook-signature'], raw));
          } finally {
            load?.leave();
          }
        },
      });
      scope.route({
        method: [...OTHER_METHODS],
        url,
        handler: async (_request, reply) => {
          metrics.received.inc();
          metrics.rejected.inc({ reason: 'method' });
          return reply.code(405).header('allow', 'POST').send({ error: 'method not allowed: deliveries are POSTed' });
        },
      });
    }
  });
}

function send(reply: FastifyReply, answer: IntakeAnswer): FastifyReply {
  // Serialized here: the hot path skips fastify's generic serializer.
  if (answer.status === 200) return reply.code(200).type('application/json').send(`{"status":"${answer.outcome}","id":${JSON.stringify(answer.id)}}`);
  if (answer.status === 503) reply.header('retry-after', '30');
  return reply.code(answer.status).send({ error: answer.reason, ...(answer.detail ? { detail: answer.detail } : {}) });
}

function tooLarge(reply: FastifyReply, metrics: IntakeMetrics): FastifyReply {
  return refuseUnread(reply, metrics, 413, 'too_large');
}

/** A delivery refused before its body was read, counted; the connection is closed so that the unread body is not parsed as the next request. */
function refuseUnread(reply: FastifyReply, metrics: IntakeMetrics, status: 413 | 415, reason: RejectReason, extra: Record<string, string> = {}): FastifyReply {
  metrics.received.inc();
  metrics.rejected.inc({ reason });
  return reply.code(status).header('connection', 'close').send({ error: reason, ...extra });
}

/** Errors from fastify's own body reading (a chunked body past the limit, a short body) and bugs. */
function answerError(error: FastifyError, request: FastifyRequest, reply: FastifyReply, metrics: IntakeMetrics, log: Logger): FastifyReply {
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return tooLarge(reply, metrics);
  if (error.code === 'ECONNRESET' || request.raw.socket?.destroyed === true) {
    // The connection ended mid-body (the client went away, or was cut off at server.requestTimeoutMs):
    // nobody to answer, nothing to fix here. One debug line each, so many cannot flood the log.
    metrics.received.inc();
    metrics.rejected.inc({ reason: 'aborted' });
    log.debug({ code: error.code }, 'webhook delivery ended before its body arrived');
    return reply.code(400).send({ error: 'aborted' });
  }
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  const reason: RejectReason = status === 500 ? 'error' : 'body';
  // A 500 comes from the handler, whose intake already counted the delivery as received.
  if (status !== 500) metrics.received.inc();
  metrics.rejected.inc({ reason });
  if (status === 500) log.error({ err: error }, 'webhook intake failed');
  else log.warn({ code: error.code, status }, 'webhook delivery unreadable');
  return reply.code(status).send({ error: reason });
}
