import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SandboxCore } from './core.js';
import { fieldsOf } from './fields.js';
import { oauthError } from './http-errors.js';
import { sendError, sendJson } from './reply.js';
import { parseBasicAuth, parseBearer } from './tokens.js';

/**
 * `POST /api/v2/authorize` (OAuth client credentials; id and secret by HTTP Basic or as form fields)
 * and the bearer check every other API route runs first.
 */
export function registerAuthorize(app: FastifyInstance, core: SandboxCore): void {
  app.post('/api/v2/authorize', async (request, reply) => {
    const fields = fieldsOf(request.body);
    const basic = parseBasicAuth(request.headers.authorization);
    const id = basic?.id ?? fields.client_id;
    const secret = basic?.secret ?? fields.client_secret;
    const grant = fields.grant_type;
    if (grant === undefined || grant === '') {
      return sendError(reply, oauthError(400, 'invalid_request', 'The grant type was not specified in the request'));
    }
    if (grant !== 'client_credentials') {
      return sendError(reply, oauthError(400, 'unsupported_grant_type', `Grant type "${grant}" not supported`));
    }
    if (id !== core.clientId || secret !== core.clientSecret) {
      return sendError(reply, oauthError(400, 'invalid_client', 'The client credentials are invalid'));
    }
    return sendJson(request, reply, core.tokens.issue());
  });
}

const TOKEN_PROBLEMS = {
  unknown: 'The access token provided is invalid',
  expired: 'The access token provided has expired',
  revoked: 'The access token provided has been revoked',
} as const;

export function bearerGuard(core: SandboxCore) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const token = parseBearer(request.headers.authorization);
    const check = token === undefined ? 'missing' : core.tokens.check(token);
    if (check === 'ok') return;
    reply.header('www-authenticate', `Bearer realm="Service", error="invalid_token"`);
    const answer = check === 'missing'
      ? oauthError(401, 'invalid_request', 'The access token was not found; send "Authorization: Bearer <token>"')
      : oauthError(401, 'invalid_token', TOKEN_PROBLEMS[check]);
    await sendError(reply, answer);
  };
}
