import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { systemClock } from '../../clock.js';
import { MILLISECONDS_THRESHOLD, verifySignature, type VerifyResult } from '../../signature/index.js';
import { CliExit } from '../errors.js';

/**
 * `schoolbridge verify-signature` (README "Commands"): checks one delivery by hand. The scheme is the same
 * both ways — the upstream's deliveries to us (keyed with upstream.clientSecret) and ours to an
 * accounting or webhook receiver (keyed with that connector's secret) — so one command serves both.
 * Exit 0 valid, 1 invalid, with one line saying why.
 */
export function registerVerifySignatureCommand(program: Command): void {
  program
    .command('verify-signature')
    .description('check a Webhook-Signature against a body and a secret (upstream deliveries and our own); exit 0 valid, 1 invalid')
    .option('--secret <secret>', 'the signing secret (upstream.clientSecret, or the connector\'s secret)')
    .option('--secret-file <file>', 'read the secret from the first line of a file instead (keeps it out of shell history)')
    .requiredOption('--header <json>', 'the Webhook-Signature header value, e.g. \'{"timestamp":1767225600,"signature":"9f…"}\'')
    .requiredOption('--body-file <file>', 'the raw request body, byte for byte ("-" reads stdin)')
    .option('--tolerance <seconds>', 'accepted age (and clock skew into the future) of the timestamp', parseSeconds, 300)
    .addHelpText('after', '\nExample:\n  schoolbridge verify-signature --secret "$SECRET" --header "$(cat header.json)" --body-file body.json')
    .action(async (options: VerifyOptions) => {
      const secret = await readSecret(options);
      const body = await readBody(options.bodyFile);
      const now = systemClock.now();
      const result = verifySignature([secret], stripHeaderName(options.header), body, now, options.tolerance);
      const { valid, message } = explainVerification(result, { nowMs: now, toleranceSeconds: options.tolerance, body });
      if (!valid) throw new CliExit(1, message);
      process.stdout.write(`${message}\n`);
    });
}

interface VerifyOptions {
  secret?: string;
  secretFile?: string;
  header: string;
  bodyFile: string;
  tolerance: number;
}

function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(seconds)) throw new CliExit(1, `--tolerance: "${value}" is not a whole number of seconds`);
  return seconds;
}

async function readSecret(options: VerifyOptions): Promise<string> {
  if (options.secret !== undefined && options.secretFile !== undefined) throw new CliExit(1, 'give --secret or --secret-file, not both');
  if (options.secretFile !== undefined) {
    const text = await readInput(options.secretFile, '--secret-file');
    const secret = text.toString('utf8').split(/\r?\n/)[0] ?? '';
    if (secret === '') throw new CliExit(1, `the secret is missing: the first line of ${options.secretFile} (--secret-file) is empty`);
    return secret;
  }
  if (!options.secret) throw new CliExit(1, 'the secret is missing: give --secret <secret> or --secret-file <file>');
  return options.secret;
}

const readBody = (file: string): Promise<Buffer> => readInput(file, '--body-file');

async function readInput(file: string, option: string): Promise<Buffer> {
  try {
    return file === '-' ? await readStdin() : await readFile(file);
  } catch (error) {
    throw new CliExit(1, `${option}: cannot read ${file}: ${(error as Error).message}`);
  }
}

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Accepts a whole copied header line too: `Webhook-Signature: {...}`. */
export function stripHeaderName(header: string): string {
  return header.replace(/^\s*webhook-signature\s*:/i, '').trim();
}

/** One line saying whether the delivery is genuine and, when not, what to look at. Pure. */
export function explainVerification(
  result: VerifyResult,
  { nowMs, toleranceSeconds, body }: { nowMs: number; toleranceSeconds: number; body: Uint8Array },
): { valid: boolean; message: string } {
  const when = (timestamp: number) => {
    const inSeconds = timestamp <= MILLISECONDS_THRESHOLD;
    const ms = inSeconds ? timestamp * 1000 : timestamp;
    // As the check counts it (verify.ts), so the age said never contradicts the verdict: a timestamp
    // in seconds against the clock's second; one in milliseconds in whole seconds rounded away from
    // now (300.2 s old is out of a 300 s window, and said as 301).
    const age = inSeconds ? Math.floor(nowMs / 1000) - timestamp : Math.sign(nowMs - ms) * Math.ceil(Math.abs(nowMs - ms) / 1000);
    // A signed timestamp may lie past any date (the upstream signs whatever number it sends).
    const date = new Date(ms);
    return { iso: Number.isNaN(date.getTime()) ? `${timestamp} (past any date)` : date.toISOString(), age };
  };
  if (result.ok) {
    const { iso, age } = when(result.timestamp);
    return { valid: true, message: `valid: the signature matches; signed at ${iso} (${age >= 0 ? `${age} s ago` : `${-age} s ahead`})` };
  }
  switch (result.reason) {
    case 'missing':
      return { valid: false, message: 'invalid: the header is empty; pass the Webhook-Signature value with --header' };
    case 'malformed':
      return { valid: false, message: 'invalid: the header is not {"timestamp":<integer seconds>,"signature":"<64 hex characters>"}' };
    case 'mismatch': {
      const newline = body.length > 0 && body[body.length - 1] === 0x0a ? '; the body file ends with a newline the delivery may not have had' : '';
      return { valid: false, message: `invalid: the signature does not match this body and secret (check the secret, and that the body file holds the exact bytes sent${newline})` };
    }
    case 'stale':
    case 'future': {
      const { iso, age } = when(result.timestamp ?? 0);
      const distance = result.reason === 'stale' ? `${age} s old` : `${-age} s in the future`;
      return { valid: false, message: `invalid: the signature matches, but its timestamp ${iso} is ${distance}, beyond the tolerance of ${toleranceSeconds} s (a replay or a wrong clock; --tolerance widens it)` };
    }
  }
}
