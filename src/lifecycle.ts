import type { Logger } from 'pino';

/** The shape every long-running part of the daemon has. Stopping twice is harmless. */
export interface Component {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Ends a start that waits (for a database to answer) at once; that start then rejects. */
  cancel?(): void;
}

/**
 * Starts components in order and stops them in reverse. A failed start stops whatever already
 * started, then rethrows. A stop asked for during the start (a SIGTERM while the store opens) ends
 * it: no further component starts, the one starting is cancelled if it waits (`cancel`) or stopped
 * once its start returns, and the start resolves; nothing begins work (a poll, a webhook
 * registration upstream) after the stop was asked for. Stop is bounded: a component that does not
 * finish within `stopTimeoutMs` is logged and left behind so the process can still exit.
 */
export function createLifecycle(components: readonly Component[], log: Logger, stopTimeoutMs = 8000): Component {
  const started: Component[] = [];
  let stopping: Promise<void> | undefined;
  /** The start running now: a stop waits for its component to return, then stops it too. */
  let starting: Promise<void> | undefined;
  /** Set by a stop: the start running now starts nothing more. */
  let halted = false;
  /** The component whose start runs now: a stop cancels its wait, if it has one. */
  let current: Component | undefined;

  async function startAll(): Promise<void> {
    for (const component of components) {
      if (halted) return;
      if (started.includes(component)) continue;
      current = component;
      try {
        await component.start();
      } catch (error) {
        // The caller reports the error itself (the CLI as one line): here it is only context.
        log.debug({ err: error, component: component.name }, 'start failed; stopping what started');
        await stopAll(started.splice(0), log, stopTimeoutMs);
        // A start the stop cut short did what was asked of it.
        if (halted) return;
        throw error;
      } finally {
        current = undefined;
      }
      started.push(component);
      log.debug({ component: component.name }, 'started');
    }
  }

  return {
    name: 'lifecycle',
    async start() {
      halted = false;
      const run = startAll();
      starting = run;
      try {
        await run;
      } finally {
        if (starting === run) starting = undefined;
      }
    },
    stop() {
      halted = true;
      current?.cancel?.();
      // A start that fails stops what it started itself; either way it leaves nothing behind here.
      stopping ??= (starting ?? Promise.resolve())
        .catch(() => {})
        .then(() => stopAll(started.splice(0), log, stopTimeoutMs))
        .finally(() => {
          stopping = undefined;
        });
      return stopping;
    },
  };
}

async function stopAll(components: Component[], log: Logger, timeoutMs: number): Promise<void> {
  for (const component of components.reverse()) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    try {
      const outcome = await Promise.race([component.stop().then(() => 'stopped' as const), timeout]);
      if (outcome === 'timeout') log.warn({ component: component.name, timeoutMs }, 'stop timed out');
    } catch (error) {
      log.error({ err: error, component: component.name }, 'stop failed');
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Makes start/stop idempotent for a component written as two plain functions. */
export function component(name: string, start: () => Promise<void>, stop: () => Promise<void>): Component {
  let running = false;
  return {
    name,
    async start() {
      if (running) return;
      await start();
      running = true;
    },
    async stop() {
      if (!running) return;
      running = false;
      await stop();
    },
  };
}
