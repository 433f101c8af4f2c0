import { describe, expect, it } from 'vitest';
import { driverUrl, sslFix } from './ssl-mode.js';

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
});
