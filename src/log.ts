import { pino, type Logger, type LoggerOptions, type DestinationStream } from 'pino';
import pretty from 'pino-pretty';
import { terminalLine } from './log-terminal.js';

export type { Logger } from 'pino';

/**
 * Keys whose values never reach a log line, at any depth: credentials, one-time passwords and
 * personal ids (CONTRACT §3, issue 2). Matching is by key name, case-insensitive, so a new place that
 * logs a whole object cannot leak them by accident.
 */
const REDACTED_KEYS = new Set(
  [
    'token', 'accessToken', 'access_token', 'refreshToken', 'clientSecret', 'client_secret', 'secret',
    'previousSecrets', 'adminToken', 'authorization', 'proxy-authorization', 'cookie', 'set-cookie',
    'password', 'oneTimePassword', 'private_key', 'privateKey', 'webhook-signature',
    'pesel', 'nipNumber', 'billingPesel', 'billingNipNumber',
  ].map((key) => key.toLowerCase()),
);

export const REDACTED = '[redacted]';

export function isRedactedKey(key: string): boolean {
  return REDACTED_KEYS.has(key.toLowerCase());
}

/** Returns a copy of `value` with redacted keys replaced; depth- and size-bounded so logging stays cheap. */
export function redactDeep(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth > 8) return '[depth]';
  if (value instanceof Error) return value;
  if (Buffer.isBuffer(value)) return `[${value.length} bytes]`;
  if (Array.isArray(value)) {
    const shown = value.slice(0, 50).map((item) => redactDeep(item, depth + 1));
    return value.length > 50 ? [...shown, `[+${value.length - 50} more]`] : shown;
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    out[key] = isRedactedKey(key) && item !== null && item !== undefined && item !== '' ? REDACTED : redactDeep(item, depth + 1);
  }
  return out;
}

export interface LogOptions {
  level?: string;
  /** Human-readable lines (pino-pretty); the CLI turns this on when stderr is a TTY. */
  pretty?: boolean;
  destination?: DestinationStream;
}

/** Levels at which logged errors carry their stack trace (`--verbose` logs at debug). */
const STACK_LEVELS = new Set(['debug', 'trace']);

/** An error as a log line shows it without `--verbose`: type, message, code and fields, no stack. */
function errorWithoutStack(error: Error): ReturnType<typeof pino.stdSerializers.err> {
  const serialized = pino.stdSerializers.err(error);
  if (serialized && typeof serialized === 'object') delete (serialized as { stack?: string }).stack;
  return serialized;
}

export function createLogger(options: LogOptions = {}): Logger {
  const level = options.level ?? 'info';
  const err = STACK_LEVELS.has(level) ? pino.stdSerializers.err : errorWithoutStack;
  const base: LoggerOptions = {
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { log: (object) => redactDeep(object) as Record<string, unknown> },
    serializers: { err, error: err },
  };
  if (options.destination) return pino(base, options.destination);
  if (options.pretty) {
    // On a terminal: one line per event (log-terminal.ts); with --verbose (debug) every field too.
    const everything = STACK_LEVELS.has(level);
    return pino(base, pretty({
      destination: 2, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname',
      ...(everything ? {} : { hideObject: true, messageFormat: terminalLine }),
    }));
  }
  return pino(base, pino.destination({ dest: 2, sync: false }));
}

/** A logger that drops everything, for tests and one-shot helpers. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
