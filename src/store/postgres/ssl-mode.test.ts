import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { createPool } from './db.js';
import { driverUrl, sslFileProblem, sslFix } from './ssl-mode.js';

describe('store.url sslmode', () => {
  it('means to the driver what it means to libpq', () => {
    expect(driverUrl('postgres://u:p@db:5432/school')).toBe('postgres://u:p@db:5432/school');
    expect(driverUrl('postgres://u:p@db:5432/school?sslmode=require')).toBe('postgres://u:p@db:5432/school?sslmode=require&uselibpqcompat=true');
    expect(driverUrl('postgres://u:p%40x@db/school?sslmode=verify-full&application_name=a')).toBe('postgres://u:p%40x@db/school?sslmode=verify-full&application_name=a&uselibpqcompat=true');
    // allow cannot fall back either: it asks for SSL as prefer does.
    expect(driverUrl('postgres://db/school?sslmode=allow')).toBe('postgres://db/school?sslmode=prefer&uselibpqcompat=true');
    // The driver's own mode, and a URL that chose the driver's behaviour itself, as they are.
    expect(driverUrl('postgres://db/school?sslmode=no-verify')).toBe('postgres://db/school?sslmode=no-verify');
    expect(driverUrl('postgres://db/school?sslmode=require&uselibpqcompat=false')).toBe('postgres://db/school?sslmode=require&uselibpqcompat=false');
  });

  it('names the mode and the fix when the server offers no SSL', () => {
    expect(sslFix(new Error('The server does not support SSL connections'), 'postgres://db/school?sslmode=prefer'))
      .toBe('; store.url asks for SSL (sslmode=prefer) and this server offers none: turn ssl on in the server, or write sslmode=disable');
    expect(sslFix(new Error('password authentication failed'), 'postgres://db/school?sslmode=prefer')).toBe('');
  });

  it('names a certificate file it names that cannot be read', () => {
    const here = fileURLToPath(import.meta.url);
    expect(sslFileProblem('postgres://db/school?sslmode=verify-full')).toBeUndefined();
    expect(sslFileProblem(`postgres://db/school?sslmode=verify-ca&sslrootcert=${here}`)).toBeUndefined();
    expect(sslFileProblem(`postgres://db/school?sslrootcert=${here}&sslkey=/no/such/key.pem`))
      .toBe("store.url's sslkey=/no/such/key.pem cannot be read (there is no such file): give the path of the file, readable by the daemon's user");
    // Every command opens its pool so: it says this, where the driver said ENOENT and the path.
    expect(() => createPool('postgres://db/school?sslcert=/no/such/cert.pem', 1)).toThrow(
      "cannot open the PostgreSQL store: store.url's sslcert=/no/such/cert.pem cannot be read (there is no such file)",
    );
  });
});
