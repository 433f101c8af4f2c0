import type { App } from '../app.js';
import type { CycleResult } from './cycle.js';

/**
 * `sync --dry-run` in-process: a cycle that reads the real snapshot and commits nothing (no daemon
 * holds the embedded store, or the store is PostgreSQL). Its changes are held in memory.
 */
export function dryRunCycle(app: App): Promise<CycleResult> {
  return app.poll.sync({ dryRun: true, trigger: 'cli' });
}
