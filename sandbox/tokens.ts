import { randomBytes } from 'node:crypto';
import type { Clock } from '../src/clock.js';
import type { IssuedToken } from './types.js';

/**
 * Bearer tokens of the sandbox: issued by /api/v2/authorize with an expiry, plus an optional static
 * token. Revoked and expired tokens are remembered so a 401 can say why.
 */
export type TokenCheck = 'ok' | 'unknown' | 'expired' | 'revoked';

export interface TokenStore {
  issue(ttlSeconds?: number): IssuedToken;
  check(token: string): TokenCheck;
  revokeAll(): void;
  expireAll(): void;
}

export function createTokenStore(options: { clock: Clock; ttlSeconds: number; staticToken?: string | undefined }): TokenStore {
  const { clock } = options;
  /** token → expiry in ms (Infinity for the static token). */
  const live = new Map<string, number>();
  const revoked = new Set<string>();
  if (options.staticToken) live.set(options.staticToken, Number.POSITIVE_INFINITY);

  return {
    issue(ttlSeconds = options.ttlSeconds) {
      const token = randomBytes(24).toString('hex');
      live.set(token, clock.now() + ttlSeconds * 1000);
      return { access_token: token, expires_in: ttlSeconds, token_type: 'Bearer', scope: 'administrator' };
    },
    check(token) {
      if (revoked.has(token)) return 'revoked';
      const expiresAt = live.get(token);
      if (expiresAt === undefined) return 'unknown';
      return clock.now() >= expiresAt ? 'expired' : 'ok';
    },
    revokeAll() {
      for (const token of live.keys()) revoked.add(token);
      live.clear();
    },
    expireAll() {
      const now = clock.now();
      for (const token of live.keys()) live.set(token, now);
    },
  };
}

/** `Authorization: Basic base64(id:secret)` → credentials, or undefined. */
export function parseBasicAuth(header: string | undefined): { id: string; secret: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!match?.[1]) return undefined;
  const text = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) return undefined;
  return { id: safeDecode(text.slice(0, colon)), secret: safeDecode(text.slice(colon + 1)) };
}

/** RFC 6749 §2.3.1 form-encodes id and secret before Basic; a stray "%" is taken literally. */
function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** `Authorization: Bearer <token>` → the token, or undefined. */
export function parseBearer(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match?.[1];
}
