/**
 * Cooperative yielding for long synchronous loops (diffing 100k records): after `budgetMs` of work,
 * give the event loop a turn with setImmediate so webhook requests are read and acknowledged. A bare
 * `await` would not do: resolved promises run as microtasks, before any I/O callback.
 */
export interface Yielder {
  /** True when the budget is used up; then call `pause()`. Cheap enough to call per record. */
  due(): boolean;
  pause(signal?: AbortSignal): Promise<void>;
}

/** One turn of the event loop: I/O callbacks that are due run before this resolves. */
export const yieldToLoop = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

export function createYielder(budgetMs = 4): Yielder {
  let since = performance.now();
  return {
    due: () => performance.now() - since >= budgetMs,
    async pause(signal) {
      await yieldToLoop();
      signal?.throwIfAborted();
      since = performance.now();
    },
  };
}
