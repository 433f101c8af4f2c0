/**
 * Bearer check of the fake: a plain access token from an allow-list, or a self-signed service
 * account JWT (what google-auth-library sends with useJWTAccessWithScope) verified against the
 * account's public key. Whether the account may open the spreadsheet is the "share" check.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { ApiError } from './grid.js';

export const SHEETS_SCOPE = 'https://www.googleapis.com/auth/spreadsheets';

export interface ServiceAccount {
  email: string;
  publicKeyPem: string;
}

export interface AuthOptions {
  tokens: readonly string[];
  serviceAccounts: readonly ServiceAccount[];
  /** E-mails the spreadsheets are shared with; plain tokens always have access. */
  sharedWith: Set<string>;
  now: () => number;
}

export type Caller = { kind: 'token' } | { kind: 'service-account'; email: string };

const unauthenticated = (why: string) =>
  new ApiError(401, `Request had invalid authentication credentials. ${why}`, 'UNAUTHENTICATED');

function decodePart(part: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
}

function verifyJwt(token: string, accounts: readonly ServiceAccount[], now: number): Caller {
  const [head, body, sig] = token.split('.');
  if (!head || !body || !sig) throw unauthenticated('Malformed token.');
  const claims = decodePart(body);
  const account = accounts.find((a) => a.email === claims.iss);
  if (!account) throw unauthenticated('Unknown issuer.');
  const key: KeyObject = createPublicKey(account.publicKeyPem);
  const valid = verify('RSA-SHA256', Buffer.from(`${head}.${body}`), key, Buffer.from(sig, 'base64url'));
  if (!valid) throw unauthenticated('Bad signature.');
  if (typeof claims.exp !== 'number' || claims.exp * 1000 < now) throw unauthenticated('Token expired.');
  const scope = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
  if (!scope.includes(SHEETS_SCOPE)) {
    throw new ApiError(403, 'Request had insufficient authentication scopes.', 'PERMISSION_DENIED');
  }
  return { kind: 'service-account', email: account.email };
}

export function authenticate(header: string | undefined, options: AuthOptions): Caller {
  const m = /^Bearer (.+)$/.exec(header ?? '');
  if (!m?.[1]) throw unauthenticated('Expected OAuth 2 access token.');
  const token = m[1];
  if (options.tokens.includes(token)) return { kind: 'token' };
  if (token.split('.').length === 3) return verifyJwt(token, options.serviceAccounts, options.now());
  throw unauthenticated('Unknown token.');
}

export function assertShared(caller: Caller, options: AuthOptions): void {
  if (caller.kind === 'service-account' && !options.sharedWith.has(caller.email)) {
    throw new ApiError(403, 'The caller does not have permission', 'PERMISSION_DENIED');
  }
}
