import { BridgeError } from '../errors.js';
import { call, type CallContext } from './call.js';
import { readJson } from './envelope.js';
import { invalidResponse } from './schemas.js';
import { createIssuedTokenSource, type IssuedToken, type TokenSource } from './token.js';

/**
 * Client credentials: POST /api/v2/authorize with HTTP Basic id:secret and the form field
 * grant_type=client_credentials (docs/upstream.md). The answer is not wrapped in `data`:
 * `{access_token, expires_in, token_type, scope}`.
 *
 * The token request has no effect but issuing a token, so it is retried like a GET.
 */
const DEFAULT_LIFETIME_SECONDS = 3600; // when the answer has no usable expires_in

export function createAuthorizer(ctx: CallContext, clientId: string, clientSecret: string): TokenSource {
  const basic = Buffer.from(`${clientId}:${clientSecret}`, 'utf8').toString('base64');
  const issue = async (): Promise<IssuedToken> => {
    try {
      return await call({ ...ctx, tokens: undefined }, {
        method: 'POST',
        path: '/api/v2/authorize',
        headers: { authorization: `Basic ${basic}` },
        form: { grant_type: 'client_credentials' },
        urlencoded: true,
        safe: true,
        read: async (body) => parseTokenAnswer(await readJson(body)),
      });
    } catch (error) {
      throw refusedCredentials(error);
    }
  };
  return createIssuedTokenSource(issue, ctx.clock);
}

export function parseTokenAnswer(answer: unknown): IssuedToken {
  const fields = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<string, unknown>;
  const token = fields.access_token;
  if (typeof token !== 'string' || token === '') throw invalidResponse('access_token', 'string', token);
  const expiresIn = fields.expires_in;
  const usable = typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0;
  return { token, expiresInSeconds: usable ? expiresIn : DEFAULT_LIFETIME_SECONDS };
}

/** 400 invalid_client (and 401/403) from the token endpoint means wrong credentials: an auth error. */
function refusedCredentials(error: unknown): unknown {
  if (!(error instanceof BridgeError) || error.code === 'upstream.auth') return error;
  if (error.code !== 'upstream.http' || (error.status !== 400 && error.status !== 401 && error.status !== 403)) return error;
  return new BridgeError('upstream.auth', `client credentials refused: ${error.message}`, {
    ...(error.status === undefined ? {} : { status: error.status }),
    cause: error,
    ...(error.context ? { context: error.context } : {}),
  });
}
