import { pino, type Logger, type LoggerOptions, type DestinationStream } from 'pino';
import pretty from 'pino-pretty';
import { terminalLine } from './log-terminal.js';
import { redactPersonalText } from './redact-text.js';

export type { Logger } from 'pino';

/**
 * Keys whose values never reach a log line, at any depth: credentials, one-time passwords and
 * personal ids (README "Security"). Matching is by key name, case-insensitive, so a new place that
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

/**
 * Keys whose string values are error texts: those can quote what a receiver answered, so personal
 * data inside them is replaced (redactPersonalText). Errors themselves go through `errorSerializer`.
 */
const ERROR_TEXT_KEYS = new Set(['error', 'err', 'lasterror', 'reason', 'detail', 'message', 'cause']);

/**
 * Returns a copy of `value` with redacted keys replaced and personal data in error texts replaced;
 * depth- and size-bounded so logging stays cheap.
 */
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
    if (isRedactedKey(key) && item !== null && item !== undefined && item !== '') out[key] = REDACTED;
    else if (typeof item === 'string' && ERROR_TEXT_KEYS.has(key.toLowerCase())) out[key] = redactPersonalText(item);
    else out[key] = redactDeep(item, depth + 1);
  }
  return out;
}

/**
 * pino's error serializer, with personal data in the message and stack replaced (causes included);
 * without `withStack`, no stack trace (what a log line shows without `--verbose`).
 */
export function errorSerializer(error: unknown, withStack = true): unknown {
  const serialized = pino.stdSerializers.err(error as Error) as unknown;
  if (typeof serialized === 'string') return redactPersonalText(serialized);
  if (serialized && typeof serialized === 'object' && error instanceof Error) (serialized as { message?: string }).message = messageOf(error);
  if (!withStack && serialized && typeof serialized === 'object') delete (serialized as { stack?: string }).stack;
  return redactErrorTexts(serialized, 0);
}

/**
 * An error's message with its causes' after it, as pino gives it, but for a cause whose message
 * the message holds already: ours quote their cause ("the store cannot write: SQLITE_FULL: database
 * or disk is full"), which pino would repeat after it.
 */
function messageOf(error: Error): string {
  let message = error.message;
  const seen = new Set<unknown>([error]);
  for (let cause: unknown = error.cause; cause && typeof (cause as { message?: unknown }).message === 'string' && !seen.has(cause) && seen.size < 8; cause = (cause as { cause?: unknown }).cause) {
    seen.add(cause);
    const text = (cause as { message: string }).message;
    if (text !== '' && !message.includes(text)) message += `: ${text}`;
  }
  return message;
}

function redactErrorTexts(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object' || depth > 4) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  for (const key of ['message', 'stack'] as const) if (typeof out[key] === 'string') out[key] = redactPersonalText(out[key]);
  // A BridgeError's context holds what a third party said (the upstream's `upstreamMessage`).
  if (out.context !== null && typeof out.context === 'object') {
    out.context = Object.fromEntries(Object.entries(redactDeep(out.context) as Record<string, unknown>).map(([key, item]) => [key, typeof item === 'string' ? redactPersonalText(item) : item]));
  }
  if (out.cause !== undefined) out.cause = redactErrorTexts(out.cause, depth + 1);
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

export function createLogger(options: LogOptions = {}): Logger {
  const level = options.level ?? 'info';
  const withStack = STACK_LEVELS.has(level);
  const err = (error: unknown) => errorSerializer(error, withStack);
  const base: LoggerOptions = {
    level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { log: (object) => redactDeep(object) as Record<string, unknown> },
    // The message often quotes an error's text ("poll cycle failed: …"): personal data in it is
    // replaced as in the fields beside it.
    hooks: {
      logMethod(args, method) {
        method.apply(this, args.map((arg) => (typeof arg === 'string' ? redactPersonalText(arg) : arg)) as Parameters<typeof method>);
      },
    },
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
