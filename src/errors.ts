/**
 * The one error type of schoolbridge. `code` is stable and documented; `retryable` says
 * whether trying the same thing again later can succeed. Expected failures travel as values
 * (`Result`), bugs throw.
 */
export class BridgeError extends Error {
  readonly code: string;
  readonly retryable: boolean;
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly context: Record<string, unknown> | undefined;

  constructor(
    code: string,
    message: string,
    options: {
      retryable?: boolean;
      status?: number;
      retryAfterMs?: number;
      cause?: unknown;
      context?: Record<string, unknown>;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'BridgeError';
    this.code = code;
    this.retryable = options.retryable ?? false;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.context = options.context;
  }

  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      ...(this.status === undefined ? {} : { status: this.status }),
      ...(this.retryAfterMs === undefined ? {} : { retryAfterMs: this.retryAfterMs }),
    };
  }
}

/**
 * The same error in other words (what it concerns, what happened before it): code, retryable,
 * status, Retry-After and context kept; `cause` is the error it rewords unless given.
 */
export function reworded(error: BridgeError, message: string, cause: unknown = error): BridgeError {
  return new BridgeError(error.code, message, {
    retryable: error.retryable,
    cause,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
    ...(error.context === undefined ? {} : { context: error.context }),
  });
}

export function isBridgeError(value: unknown): value is BridgeError {
  return value instanceof BridgeError;
}

/** An expected outcome: either a value or a BridgeError, never a throw. */
export type Result<T, E = BridgeError> = { ok: true; value: T } | { ok: false; error: E };

export const ok = <T>(value: T): Result<T, never> => ({ ok: true, value });
export const err = <E>(error: E): Result<never, E> => ({ ok: false, error });

/** A short, single-line description of any thrown value, for logs and `lastError` fields. */
export function describeError(error: unknown): string {
  if (error instanceof BridgeError) return `${error.code}: ${error.message}`;
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    // Node's system errors name their code first already ("ENOSPC: no space left on device, write").
    return typeof code === 'string' && !error.message.startsWith(`${code}:`) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
