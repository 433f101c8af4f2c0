/**
 * One deadline for a whole HTTP exchange: connecting, sending, the answer's headers and as much of its
 * body as is read. undici's own `headersTimeout` and `bodyTimeout` bound each wait, and the body's
 * starts again with every chunk, so a peer that sends a byte now and then would never reach them.
 * `signal` aborts at the deadline or when `outer` does (the daemon stopping); `expired` says which.
 */
export interface Deadline {
  readonly signal: AbortSignal;
  readonly expired: boolean;
  /** Call when the exchange is over: the timer stops and `outer` is let go. */
  clear(): void;
}

export function startDeadline(ms: number, outer?: AbortSignal): Deadline {
  const controller = new AbortController();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    controller.abort(new Error(`no complete answer within ${ms} ms`));
  }, ms);
  const onOuter = () => controller.abort(outer?.reason);
  if (outer?.aborted) onOuter();
  else outer?.addEventListener('abort', onOuter, { once: true });
  return {
    signal: controller.signal,
    get expired() {
      return expired;
    },
    clear() {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuter);
    },
  };
}
