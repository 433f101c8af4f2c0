import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { signatureHeader, verifySignature } from '../../signature/index.js';
import { CliExit } from '../errors.js';
import { explainVerification, registerVerifySignatureCommand, stripHeaderName } from './verify-signature.js';

const SECRET = 'sandbox-secret';
const BODY = Buffer.from('{"event":"invoice.created","object":{"id":1001,"place":"Łódź"}}');
const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('explainVerification', () => {
  const NOW = Date.parse('2026-11-22T10:00:00Z');
  const at = (offsetSeconds: number) => signatureHeader(SECRET, BODY, NOW / 1000 + offsetSeconds);
  const explain = (header: string, body: Uint8Array = BODY, secret = SECRET) =>
    explainVerification(verifySignature([secret], header, body, NOW, 300), { nowMs: NOW, toleranceSeconds: 300, body });

  it.each([
    ['a fresh signature', () => explain(at(-5)), true, /^valid: the signature matches; signed at 2026-11-22T09:59:55.000Z \(5 s ago\)$/],
    ['a little ahead', () => explain(at(20)), true, /\(20 s ahead\)/],
    ['another secret', () => explain(at(0), BODY, 'other'), false, /^invalid: the signature does not match this body and secret/],
    ['a body with an added newline', () => explain(at(0), Buffer.concat([BODY, Buffer.from('\n')])), false, /ends with a newline/],
    ['an old delivery', () => explain(at(-3600)), false, /signature matches, but its timestamp .* is 3600 s old, beyond the tolerance of 300 s/],
    ['from the future', () => explain(at(900)), false, /900 s in the future/],
    ['past any date', () => explain(signatureHeader(SECRET, BODY, 9007199254740991)), false, /^invalid: the signature matches, but its timestamp 9007199254740991 \(past any date\) is \d+ s in the future/],
    ['an empty header', () => explain(''), false, /header is empty/],
    ['not JSON', () => explain('t=1,v1=abc'), false, /is not \{"timestamp"/],
  ])('%s', (_name, run, valid, message) => {
    const result = run();
    expect(result.valid).toBe(valid);
    expect(result.message).toMatch(message);
    expect(result.message).not.toContain('\n');
  });

  it('says an age at the edge of the window as the check counts it, never against its verdict', () => {
    // 0.8 s into the second after the edge's: in the window, and 300 s old (not 301).
    const late = NOW + 300_800;
    const edge = explainVerification(verifySignature([SECRET], at(0), BODY, late, 300), { nowMs: late, toleranceSeconds: 300, body: BODY });
    expect(edge).toEqual({ valid: true, message: 'valid: the signature matches; signed at 2026-11-22T10:00:00.000Z (300 s ago)' });
    const ahead = NOW + 800;
    const future = explainVerification(verifySignature([SECRET], at(301), BODY, ahead, 300), { nowMs: ahead, toleranceSeconds: 300, body: BODY });
    expect(future.message).toMatch(/is 301 s in the future, beyond the tolerance of 300 s/);
  });

  it('accepts a whole copied header line', () => {
    expect(stripHeaderName(' Webhook-Signature: {"timestamp":1} ')).toBe('{"timestamp":1}');
    expect(stripHeaderName('{"timestamp":1}')).toBe('{"timestamp":1}');
  });
});

describe('verify-signature command', () => {
  let dir: string;
  let out: string[];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'verify-'));
    await writeFile(join(dir, 'body.json'), BODY);
    await writeFile(join(dir, 'secret'), `${SECRET}\n`);
    out = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out.push(String(chunk));
      return true;
    });
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await rm(dir, { recursive: true, force: true });
  });

  const run = async (...args: string[]) => {
    const program = new Command('schoolbridge').exitOverride();
    registerVerifySignatureCommand(program);
    await program.parseAsync(['verify-signature', ...args], { from: 'user' });
  };
  const rejection = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);

  it('valid: exit 0 (no throw) and one line on stdout', async () => {
    await run('--secret', SECRET, '--header', signatureHeader(SECRET, BODY, nowSeconds()), '--body-file', join(dir, 'body.json'));
    expect(out.join('')).toMatch(/^valid: .*\n$/);
  });

  it('reads the secret from a file', async () => {
    await run('--secret-file', join(dir, 'secret'), '--header', signatureHeader(SECRET, BODY, nowSeconds()), '--body-file', join(dir, 'body.json'));
    expect(out.join('')).toMatch(/^valid:/);
  });

  it.each([
    ['a wrong secret', ['--secret', 'wrong'], /^invalid: the signature does not match/],
    ['no secret', [], /the secret is missing/],
    ['both secret options', ['--secret', 'x', '--secret-file', 'y'], /not both/],
    ['an empty secret file', ['--secret-file', '<empty>'], /^the secret is missing: the first line of .*empty \(--secret-file\) is empty$/],
  ])('%s: exit 1 with one line', async (_name, secretArgs, message) => {
    const header = signatureHeader(SECRET, BODY, nowSeconds());
    await writeFile(join(dir, 'empty'), '\n');
    const error = await rejection(run(...secretArgs.map((arg) => (arg === '<empty>' ? join(dir, 'empty') : arg)), '--header', header, '--body-file', join(dir, 'body.json')));
    expect(error).toBeInstanceOf(CliExit);
    expect(error).toMatchObject({ exitCode: 1, message: expect.stringMatching(message) });
  });

  it('a stale delivery fails at the default tolerance and passes with a wider one', async () => {
    const header = signatureHeader(SECRET, BODY, nowSeconds() - 1000);
    expect(await rejection(run('--secret', SECRET, '--header', header, '--body-file', join(dir, 'body.json')))).toMatchObject({ exitCode: 1 });
    await run('--secret', SECRET, '--header', header, '--body-file', join(dir, 'body.json'), '--tolerance', '2000');
    expect(out.join('')).toMatch(/^valid:/);
  });

  it('an unreadable body file says which option and file', async () => {
    const error = await rejection(run('--secret', SECRET, '--header', '{}', '--body-file', join(dir, 'missing.json')));
    expect(error).toMatchObject({ exitCode: 1, message: expect.stringMatching(/^--body-file: cannot read .*missing\.json/) });
  });
});
