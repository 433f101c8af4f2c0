/**
 * The two error shapes of the real service (docs/upstream.md): flat OAuth for credentials and tokens,
 * nested `{error:{code,message}}` for requests. Statuses follow the kind of error.
 */
export interface ErrorAnswer {
  status: number;
  body: unknown;
}

export function oauthError(status: number, error: string, description: string): ErrorAnswer {
  return { status, body: { error, error_description: description } };
}

export function nestedError(status: number, code: string, message: string): ErrorAnswer {
  return { status, body: { error: { code, message } } };
}

export const missingParameter = (name: string): ErrorAnswer =>
  nestedError(400, 'invalidRequest', `Request parameter '${name}' is missing`);

export const invalidParameter = (name: string): ErrorAnswer =>
  nestedError(400, 'invalidRequest', `Request parameter '${name}' is invalid`);

export const notFound = (what: string): ErrorAnswer => nestedError(404, 'notFound', `${what} was not found`);

const NESTED_CODES: Record<number, [string, string]> = {
  400: ['invalidRequest', 'The request is invalid'],
  404: ['notFound', 'Resource was not found'],
  405: ['methodNotAllowed', 'Method not allowed'],
  408: ['requestTimeout', 'Request timeout'],
  409: ['conflict', 'Conflict'],
  422: ['invalidRequest', 'The request could not be processed'],
  429: ['tooManyRequests', 'Too many requests'],
  500: ['internalError', 'Internal server error'],
  502: ['badGateway', 'Bad gateway'],
  503: ['serviceUnavailable', 'Service unavailable'],
  504: ['gatewayTimeout', 'Gateway timeout'],
};

/** The body an injected status fault answers with: the shape the real service would use for it. */
export function errorForStatus(status: number, message?: string): ErrorAnswer {
  if (status === 401) return oauthError(401, 'invalid_token', message ?? 'The access token provided is invalid');
  if (status === 403) return oauthError(403, 'insufficient_scope', message ?? 'The request requires higher privileges than provided by the access token');
  const [code, text] = NESTED_CODES[status] ?? [status >= 500 ? 'internalError' : 'invalidRequest', `HTTP ${status}`];
  return nestedError(status, code, message ?? text);
}
