/**
 * Group commit for calls that arrive together: calls made while a batch runs (or in the same turn of
 * the event loop) are run as the next batch, in one transaction. A batch that fails for a reason of
 * its own (not "the store cannot write") is run again call by call, so one bad call fails alone.
 */
export interface Batcher<I, O> {
  call(item: I): Promise<O>;
}

export function createBatcher<I, O>(options: {
  run(items: I[]): Promise<O[]>;
  /** Batches in flight at once (each holds a connection of the pool). */
  concurrency: number;
  maxItems: number;
  /** Whether an error is the store's own (then every call of the batch fails with it, none is retried alone). */
  isUnavailable(error: unknown): boolean;
}): Batcher<I, O> {
  let queue: { item: I; resolve(value: O): void; reject(error: unknown): void }[] = [];
  let running = 0;
  let scheduled = false;

  const runBatch = async (batch: typeof queue) => {
    try {
      const results = await options.run(batch.map((b) => b.item));
      batch.forEach((b, i) => b.resolve(results[i]!));
    } catch (error) {
      if (batch.length === 1 || options.isUnavailable(error)) {
        for (const b of batch) b.reject(error);
        return;
      }
      for (const b of batch) {
        try {
          b.resolve((await options.run([b.item]))[0]!);
        } catch (alone) {
          b.reject(alone);
        }
      }
    }
  };

  const flush = () => {
    scheduled = false;
    while (running < options.concurrency && queue.length > 0) {
      const batch = queue.slice(0, options.maxItems);
      queue = queue.slice(batch.length);
      running += 1;
      void runBatch(batch).finally(() => {
        running -= 1;
        if (queue.length > 0) schedule();
      });
    }
  };

  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };

  return {
    call(item) {
      return new Promise<O>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        schedule();
      });
    },
  };
}
