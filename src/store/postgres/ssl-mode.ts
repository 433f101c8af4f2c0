import { accessSync, constants } from 'node:fs';
import { userInfo } from 'node:os';

/** The values of `sslmode` that store.url may give, as libpq names them, and the driver's `no-verify`. */
export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'] as const;

/** store.url's sslmode, if it gives one (whatever its value). */
export function sslModeOf(url: string): string | undefined {
  return URL.canParse(url) ? (new URL(url).searchParams.get('sslmode') ?? undefined) : undefined;
}

/** What is wrong with store.url's sslmode, for the config to say; undefined when nothing is. */
export function sslModeProblem(url: string): string | undefined {
  const mode = sslModeOf(url);
  if (mode === undefined) return undefined;
  if (!(SSL_MODES as readonly string[]).includes(mode)) return `sslmode=${mode.slice(0, 40)} is not one of ${SSL_MODES.join(', ')}`;
  if (mode === 'verify-ca' && !new URL(url).searchParams.has('sslrootcert')) {
    return 'sslmode=verify-ca checks the certificate against a CA of your own: add sslrootcert=<its file>, or use sslmode=verify-full';
  }
  return undefined;
}

/**
 * store.url as the driver is to read it: its sslmode means what it means to libpq and to every other
 * PostgreSQL client (require: encrypted, the certificate not verified; verify-ca: verified against
 * sslrootcert; verify-full: and the host name too), where the driver by itself takes prefer, require
 * and verify-ca for verify-full and prints a warning of eight lines. `allow` and `prefer` ask for
 * SSL as `require` does: the driver cannot fall back to a connection without it.
 */
export function driverUrl(url: string): string {
  const mode = sslModeOf(url);
  if (mode === undefined || mode === 'no-verify') return url;
  const parsed = new URL(url);
  if (parsed.searchParams.has('uselibpqcompat')) return url;
  if (mode === 'allow') parsed.searchParams.set('sslmode', 'prefer');
  parsed.searchParams.set('uselibpqcompat', 'true');
  return parsed.toString();
}

/** What to do about a server that offers no SSL to a store.url that asks for it. */
export function sslFix(error: unknown, url: string): string {
  if (!/does not support SSL/i.test((error as Error | undefined)?.message ?? '')) return '';
  const mode = sslModeOf(url);
  return `; store.url asks for SSL${mode ? ` (sslmode=${mode})` : ''} and this server offers none: turn ssl on in the server, or write sslmode=disable`;
}

/** store.url's parameters that name a file the driver reads as it opens the pool. */
const SSL_FILES = ['sslrootcert', 'sslcert', 'sslkey'] as const;

/**
 * Which file named by store.url (sslrootcert, sslcert, sslkey) this process cannot read, and why:
 * the driver reads them as the pool is made, and says only ENOENT or EACCES and the path.
 */
export function sslFileProblem(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const params = new URL(url).searchParams;
  for (const name of SSL_FILES) {
    const file = params.get(name);
    if (!file) continue;
    try {
      accessSync(file, constants.R_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
      const why = code === 'ENOENT' ? 'there is no such file' : code === 'EACCES' ? `user ${userInfo().username} may not read it` : code;
      return `store.url's ${name}=${file} cannot be read (${why}): give the path of the file, readable by the daemon's user`;
    }
  }
  return undefined;
}
