import { EventEmitter } from 'node:events';
import type { Logger } from 'pino';
import { configSchema, type Config } from '../../src/config/index.js';
import { createLogger } from '../../src/log.js';

/**
 * The config of a daemon app that does only what its test does: the embedded sandbox as upstream
 * (deliveries signed with `clientSecret`), a loopback server on a free port, no start-up reconcile,
 * no scheduled poll or export. `storeDir` is the test's own: the embedded sandbox keeps its school
 * in `store.dir` even beside a store the test gives the app, and the default is `./data` of the
 * checkout, `npm start`'s. `overrides` replace whole top-level blocks.
 */
export function quietConfig(clientSecret: string, storeDir: string, overrides: Record<string, unknown> = {}): Config {
  return configSchema.parse({
    upstream: { baseUrl: 'sandbox', clientId: 'test-client', clientSecret },
    sandbox: { students: 1 },
    store: { dir: storeDir },
    server: { host: '127.0.0.1', port: 0 },
    webhooks: { reconcileOnStart: false },
    poll: { onStart: false, schedule: '0 0 1 1 *' },
    export: { onStart: false, schedule: '0 0 1 1 *' },
    ...overrides,
  });
}

/** A logger (the daemon's own, redaction included) whose lines a test reads: every line kept, and emitted as `line`. */
export function capturedLogger(level = 'debug'): { log: Logger; lines: string[]; logged: EventEmitter } {
  const lines: string[] = [];
  const logged = new EventEmitter();
  const log = createLogger({
    level,
    destination: {
      write(text: string) {
        lines.push(text);
        logged.emit('line', text);
      },
    },
  });
  return { log, lines, logged };
}
