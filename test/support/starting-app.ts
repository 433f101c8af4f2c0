import path from 'node:path';
import { pino } from 'pino';
import { createApp, type App } from '../../src/app.js';
import { configSchema, type Config } from '../../src/config/index.js';

/**
 * A daemon that polls and exports as it starts, into a `file` connector under `dir`, with the
 * embedded sandbox: what a start that fails or is stopped must not have begun. `cycles` collects
 * the poll cycles it runs.
 */
export async function startingApp(dir: string, port: number): Promise<{ app: App; config: Config; cycles: unknown[] }> {
  const config = configSchema.parse({
    sandbox: { students: 3 },
    server: { host: '127.0.0.1', port },
    poll: { onStart: true },
    export: { onStart: true },
    store: { dir: path.join(dir, 'data') },
    connectors: [{ name: 'files', type: 'file', streams: ['students', 'users', 'roster'], dir: path.join(dir, 'out') }],
  });
  const app = await createApp({ config, log: pino({ level: 'silent' }), mode: 'daemon' });
  const cycles: unknown[] = [];
  app.poll.poller.on('cycle', (result) => cycles.push(result));
  return { app, config, cycles };
}
