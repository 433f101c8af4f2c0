import type { FastifyHttpOptions } from 'fastify';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/** The limits every connection to the daemon's HTTP server is held to (server.* in the config). */
export interface ServerLimits {
  /** The headers and body of one request must arrive within this, from the connection's first moment or the previous answer. */
  requestTimeoutMs: number;
  /** A connection with no traffic either way for this long, while a request is handled or answered, is closed. */
  connectionTimeoutMs: number;
  /** Connections open at once; one more is closed as it arrives. */
  maxConnections: number;
}

/** How long an idle connection is kept between requests (fastify's default, longer than common load balancers' 60 s). */
export const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/**
 * The fastify options that hold a client to `limits`, pure. Node closes a request that is not whole
 * in time with a 408 (a body sent a byte at a time, or nothing at all), but it only looks every so
 * often: it looks every tenth of the limit (at most every second) and counts from the limit less
 * that step, so a slow client is gone by `requestTimeoutMs` at the latest, and the buffer of its
 * body with it. The cap on connections is the server's own setting (`applyConnectionCap`).
 */
export function fastifyServerOptions(limits: ServerLimits): Pick<FastifyHttpOptions<Server>, 'requestTimeout' | 'connectionTimeout' | 'keepAliveTimeout' | 'http'> {
  const step = Math.max(1, Math.min(1000, Math.floor(limits.requestTimeoutMs / 10)));
  const requestTimeout = Math.max(1, limits.requestTimeoutMs - step);
  return {
    requestTimeout,
    connectionTimeout: limits.connectionTimeoutMs,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    // Headers count toward the same limit; Node refuses a headers timeout longer than the request's.
    http: { requestTimeout, headersTimeout: requestTimeout, connectionsCheckingInterval: step },
  };
}

/**
 * A client that asks before it sends its body (`Expect: 100-continue`) is invited to send it only
 * when its Content-Length is within the limit. Node answers "100 Continue" by itself to every such
 * request, which invites a client to upload a body only to have it refused; without the invitation
 * the request goes on to its route, which refuses it before reading (413 on the webhook route).
 */
export function refuseLargeBeforeContinue(server: Server, bodyLimitBytes: number): void {
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    if (!(Number(request.headers['content-length']) > bodyLimitBytes)) response.writeContinue();
    server.emit('request', request, response);
  });
}

/** Beyond `maxConnections`, Node closes a new connection as soon as it is accepted. */
export function applyConnectionCap(server: Server, limits: ServerLimits): void {
  server.maxConnections = limits.maxConnections;
}
