import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BridgeError } from './errors.js';
import { createLogger, redactDeep } from './log.js';

function capture(level = 'debug') {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, log: createLogger({ level, destination }) };
}

const SECRETS = {
  token: 'tok-AAAA',
  clientSecret: 'cs-BBBB',
  adminToken: 'adm-CCCC',
  oneTimePassword: 'otp-DDDD',
  pesel: '90010112345',
  nipNumber: 'nip-EEEE',
  billingPesel: 'bp-FFFF',
  billingNipNumber: 'bn-GGGG',
};

describe('logger redaction', () => {
  it('never writes a secret or personal id, at any depth, in any logger', () => {
    const { lines, log } = capture();
    const child = log.child({ component: 'test' });
    child.info({ config: { upstream: { token: SECRETS.token, clientSecret: SECRETS.clientSecret }, server: { adminToken: SECRETS.adminToken } } }, 'config');
    child.info({ headers: { Authorization: `Bearer ${SECRETS.token}`, 'content-type': 'json' } }, 'request');
    child.warn(
      {
        student: {
          id: 1,
          user: {
            oneTimePassword: SECRETS.oneTimePassword,
            additionalData: { pesel: SECRETS.pesel, nipNumber: SECRETS.nipNumber, billingPesel: SECRETS.billingPesel, billingNipNumber: SECRETS.billingNipNumber, city: 'Łódź' },
            parentUser: { oneTimePassword: SECRETS.oneTimePassword },
          },
        },
      },
      'student',
    );
    child.debug({ list: [{ token: SECRETS.token }] }, 'list');
    const output = lines.join('');
    expect(lines).toHaveLength(4);
    for (const secret of Object.values(SECRETS)) expect(output).not.toContain(secret);
    expect(output).toContain('Łódź');
    expect(output).toContain('[redacted]');
  });

  it('replaces personal data inside error texts, in fields and in errors, and keeps the rest', () => {
    const { lines, log } = capture();
    const echo = 'the receiver answered 422: {"buyer":"Jan Kowalski","email":"jan.kowalski@example.com","pesel":"85010112345"}';
    log.warn({ id: 'hook:invoices:x', error: `webhook.rejected: ${echo}` }, 'delivery dead');
    log.error({ err: new Error(echo, { cause: new Error(`inner ${echo}`) }) }, 'failed');
    log.info({ lastError: echo, detail: echo, reason: echo }, 'other fields');
    const output = lines.join('');
    for (const personal of ['Jan Kowalski', 'jan.kowalski@example.com', '85010112345']) expect(output).not.toContain(personal);
    expect(output).toContain('webhook.rejected: the receiver answered 422');
    expect(output).toContain('hook:invoices:x');
  });

  it('replaces personal data in the message and in an error\'s context as in the fields beside them', () => {
    const { lines, log } = capture();
    const said = 'student Jan (jan.kowalski@example.com, PESEL 85010112345) is locked';
    log.warn({ error: said }, `poll cycle failed: ${said}`);
    log.info('%s and %s', 'format jan.kowalski@example.com', 'args');
    log.error({ err: new BridgeError('upstream.http', 'upstream answered HTTP 423', { context: { upstreamMessage: said, path: 'data' } }) }, 'failed');
    const output = lines.join('');
    for (const personal of ['jan.kowalski@example.com', '85010112345']) expect(output).not.toContain(personal);
    expect(JSON.parse(lines[0]!)).toMatchObject({ msg: 'poll cycle failed: student Jan ([email], PESEL [redacted]) is locked' });
    expect(JSON.parse(lines[1]!)).toMatchObject({ msg: 'format [email] and args' });
    expect(JSON.parse(lines[2]!)).toMatchObject({ err: { context: { upstreamMessage: 'student Jan ([email], PESEL [redacted]) is locked', path: 'data' } } });
  });

  it('leaves empty values visible (so "not set" can be told from "set")', () => {
    expect(redactDeep({ token: '', secret: null, adminToken: undefined })).toEqual({ token: '', secret: null, adminToken: undefined });
  });
});

describe('logged errors', () => {
  it('name a cause once when their message quotes it already', () => {
    const { lines, log } = capture();
    const full = { code: 'SQLITE_FULL', message: 'database or disk is full' };
    log.error({ err: new Error('the store cannot write: SQLITE_FULL: database or disk is full', { cause: full }) }, 'not acknowledged');
    log.error({ err: new Error('could not save', { cause: new Error('ENOSPC: no space left on device') }) }, 'other');
    const [quoted, appended] = lines.map((line) => (JSON.parse(line) as { err: { message: string } }).err.message);
    expect(quoted).toBe('the store cannot write: SQLITE_FULL: database or disk is full');
    expect(appended).toBe('could not save: ENOSPC: no space left on device');
  });


  it('carry no stack trace but at debug level (--verbose), and keep their message and code', () => {
    const error = Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE' });
    for (const [level, stack] of [['info', false], ['warn', false], ['debug', true]] as const) {
      const { lines, log } = capture(level);
      log.error({ err: error }, 'start failed');
      log.error({ error }, 'start failed');
      for (const line of lines) {
        const logged = JSON.parse(line) as { err?: Record<string, unknown>; error?: Record<string, unknown> };
        const shown = logged.err ?? logged.error!;
        expect(shown).toMatchObject({ message: 'listen EADDRINUSE', code: 'EADDRINUSE' });
        expect('stack' in shown, level).toBe(stack);
      }
    }
  });
});
