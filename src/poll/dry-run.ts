import { access } from 'node:fs/promises';
import type { App } from '../app.js';
import { createStore } from '../store/index.js';
import type { CycleResult } from './cycle.js';
import { createPoller } from './poller.js';

/**
 * `sync --dry-run` without a daemon: the app runs on an in-memory store (so its outbox delivers
 * nothing), and the real store is opened only to read the snapshot; the poller commits nothing in a
 * dry run, so the no-op outbox is never asked to enqueue. Without a store yet, the diff runs against
 * an empty snapshot (what a first cycle would do).
 */
export async function dryRunCycle(app: App): Promise<CycleResult> {
  const dir = app.config.store.dir;
  const exists = await access(dir).then(() => true, () => false);
  if (!exists) return app.poll.sync({ dryRun: true, trigger: 'cli' });
  const store = createStore({ dir, log: app.log.child({ component: 'store' }) });
  await store.start();
  try {
    const poller = createPoller({
      store, upstream: app.upstream, outbox: { enqueueOps: () => [], notify: () => {}, holdDeliveries: () => () => {}, depth: () => 0, on: () => () => {} },
      poll: app.config.poll, clock: app.clock, log: app.log.child({ component: 'poll' }), metrics: app.metrics,
    });
    return await poller.runCycle({ dryRun: true, trigger: 'cli' });
  } finally {
    await store.stop();
  }
}
