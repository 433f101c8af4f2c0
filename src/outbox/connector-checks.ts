import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { ConnectorContext } from '../connectors/types.js';
import { describeError } from '../errors.js';
import type { ReadinessState } from '../readiness.js';
import type { ConnectorInstance } from './connector-instance.js';

/**
 * Runs every connector's `check()` (credentials, reachability) at start and every `intervalMs`, and
 * keeps the last result for /readyz, which must never wait on the network. While one fails they run
 * every FAILING_MS instead: a fix, or the end of a receiver's one bad answer, shows within seconds.
 */
export interface ConnectorChecks {
  state(name: string): ReadinessState;
  /** Runs all checks now; resolves when they are done. */
  runAll(): Promise<void>;
  /**
   * A delivery of the connector failed for now, or one went through: checks it again now, unless it
   * was checked within FAILING_MS, so that /readyz follows a full disk or a receiver gone down within
   * seconds rather than at the next round, and a flaky receiver does not set off a check per batch.
   */
  delivered(name: string, ok: boolean): void;
  start(): void;
  stop(): Promise<void>;
}

/** How soon checks run again while one of them fails (at most `intervalMs`). */
export const FAILING_MS = 15_000;

export function createConnectorChecks(options: {
  targets: readonly { instance: ConnectorInstance; ctx: ConnectorContext }[];
  clock: Clock;
  log: Logger;
  intervalMs: number;
  signal: AbortSignal;
}): ConnectorChecks {
  const states = new Map<string, ReadinessState>();
  /** When each connector's check last started (ms), and those running: what `delivered` waits out. */
  const checkedAt = new Map<string, number>();
  const checking = new Map<string, Promise<void>>();
  let running: Promise<void> | undefined;
  let loop: Promise<void> | undefined;

  async function checkOne({ instance, ctx }: { instance: ConnectorInstance; ctx: ConnectorContext }): Promise<void> {
    checkedAt.set(instance.name, options.clock.now());
    let state: ReadinessState;
    try {
      const result = await instance.connector.check(ctx);
      state = result.ok ? { ok: true } : { ok: false, reason: result.reason };
    } catch (error) {
      state = { ok: false, reason: `check failed: ${describeError(error)}` };
    }
    const before = states.get(instance.name);
    if (!state.ok && (before?.ok !== false || before.reason !== state.reason)) {
      options.log.warn({ connector: instance.name, reason: state.reason }, 'connector check failed');
    } else if (state.ok && before?.ok === false) options.log.info({ connector: instance.name }, 'connector check passes again');
    states.set(instance.name, state);
  }

  const runAll = () => {
    running ??= Promise.all(options.targets.map(checkOne)).then(
      () => undefined,
      () => undefined,
    ).finally(() => {
      running = undefined;
    });
    return running;
  };

  return {
    state: (name) => states.get(name) ?? { ok: false, reason: 'not checked yet' },
    runAll,
    delivered(name, ok) {
      const state = states.get(name);
      // Only news: a failure while it passes, a success while it fails.
      if (!state || state.ok === ok || checking.has(name) || options.signal.aborted) return;
      if (options.clock.now() - (checkedAt.get(name) ?? -Infinity) < FAILING_MS) return;
      const target = options.targets.find((t) => t.instance.name === name);
      if (!target) return;
      checking.set(name, checkOne(target).finally(() => checking.delete(name)));
    },
    start() {
      if (loop || options.intervalMs <= 0) return;
      loop = (async () => {
        await runAll();
        while (!options.signal.aborted) {
          const failing = [...states.values()].some((state) => !state.ok);
          await options.clock.sleep(failing ? Math.min(FAILING_MS, options.intervalMs) : options.intervalMs, options.signal);
          await runAll();
        }
      })().catch(() => {});
    },
    async stop() {
      await loop;
      await running;
      await Promise.all(checking.values());
    },
  };
}
