/** The API v2 client: everything the daemon reads from or writes to the upstream goes through it. */
export type * from './types.js';
export { createUpstreamClient } from './client.js';
export { createUpstreamAgent } from './agent.js';
export { normalizeStudent, normalizeUser, normalizeValue, normalizeInPlace, extractOneTimePasswords } from './normalize.js';
export { UPSTREAM_ERROR_CODES } from './errors.js';
export { upstreamReadiness } from './readiness.js';
