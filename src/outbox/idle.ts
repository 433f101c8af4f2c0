import type { Clock } from '../clock.js';
import type { OutboxStore } from '../store/index.js';
import type { ConnectorWorker } from './worker.js';

/**
 * Resolves when nothing is due or in flight for this outbox's workers, or once `stillWaiting` says
 * there is no point (held, stopping). A worker claims again after every batch, until a claim finds
 * nothing: then it is not busy.
 */
export async function waitIdle(on: {
  workers: readonly ConnectorWorker[];
  store: OutboxStore;
  clock: Clock;
  pumpAll: () => void;
  stillWaiting: () => boolean;
}): Promise<void> {
  const { workers, store, clock } = on;
  for (let looks = 0; ; looks++) {
    const busy = workers.flatMap((w) => w.busy());
    if (busy.length > 0) {
      await Promise.allSettled(busy);
      continue;
    }
    if (!on.stillWaiting()) return;
    const now = clock.now();
    // A connector another replica serves is that replica's to deliver: not this outbox's to wait for.
    // One whose receiver asked to wait starts nothing before then.
    const next = (w: ConnectorWorker) => store.nextRunAt(w.name).then((at) => (at === undefined ? undefined : Math.max(at, w.receiverWaitsUntil())), () => undefined);
    const due = await Promise.all(workers.map((w) => (w.hold ? w.serving().then((serving) => (serving ? next(w) : undefined)) : next(w))));
    if (due.every((at) => at === undefined || at > now)) return;
    // Due, yet no claim running: start one (after a pause if the last look found the same: the
    // store may be refusing claims for now, and the workers retry by themselves shortly).
    if (looks > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    on.pumpAll();
  }
}

/** A real-time bound (not the injected clock: a fake clock must not make stop() hang). */
export async function withTimeout(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
