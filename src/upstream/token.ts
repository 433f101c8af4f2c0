import type { Clock } from '../clock.js';

/**
 * Where the bearer token comes from. A static token never changes; client credentials are
 * exchanged at POST /api/v2/authorize and cached until shortly before `expires_in`.
 *
 * Races this handles: many requests waiting for a token share one refresh (single flight), and
 * when several requests see a 401 with the same token, only the first forgets it; the others
 * reuse whatever the refresh brings instead of refreshing again.
 */
export interface TokenSource {
  /** A token to send now (may refresh first). */
  get(): Promise<string>;
  /**
   * The upstream refused `token` (401/403). Returns true if asking again with a fresh token may
   * help (issued tokens), false if nothing would change (a static token).
   */
  reject(token: string): boolean;
}

export interface IssuedToken {
  token: string;
  /** Lifetime in seconds, as `expires_in` said. */
  expiresInSeconds: number;
}

export function createStaticTokenSource(token: string): TokenSource {
  return { get: () => Promise.resolve(token), reject: () => false };
}

/** Refresh this long before expiry: a tenth of the lifetime, at most five minutes. */
export function refreshMarginMs(lifetimeMs: number): number {
  return Math.min(5 * 60_000, lifetimeMs / 10);
}

export function createIssuedTokenSource(issue: () => Promise<IssuedToken>, clock: Clock): TokenSource {
  let current: { token: string; refreshAt: number } | undefined;
  let inflight: Promise<string> | undefined;

  const refresh = (): Promise<string> => {
    inflight ??= issue()
      .then((issued) => {
        const lifetimeMs = issued.expiresInSeconds * 1000;
        current = { token: issued.token, refreshAt: clock.now() + lifetimeMs - refreshMarginMs(lifetimeMs) };
        return issued.token;
      })
      .finally(() => {
        inflight = undefined;
      });
    return inflight;
  };

  return {
    get() {
      if (current && clock.now() < current.refreshAt) return Promise.resolve(current.token);
      return refresh();
    },
    reject(token) {
      // Only the first of several requests refused with the same token forgets it; the others
      // then share the refresh that the first one's retry starts. The caller allows one re-auth per call.
      if (current?.token === token) current = undefined;
      return true;
    },
  };
}
