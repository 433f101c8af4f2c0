import pg from 'pg';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import { describeError } from '../../errors.js';
import type { StoreChange } from '../port.js';
import { APPLICATION_NAME } from './db.js';
import { driverUrl } from './ssl-mode.js';

/** The channel every replica's commits notify on (NOTIFY reaches only the database it is sent in). */
export const CHANNEL = 'schoolbridge';

const CHANGES: ReadonlySet<string> = new Set<StoreChange>(['outbox', 'roles']);

/**
 * A connection of its own that LISTENs on CHANNEL and tells the store's watchers what other replicas
 * changed. A notice is sent once the change it tells of has committed (notifier.ts). The connection
 * is made again, with back-off, whenever it breaks; notices sent meanwhile are lost, which the
 * watchers' own periodic looks make up for.
 */
export interface Listener {
  /** Starts listening; resolves once the first attempt has listened or failed (it never rejects). */
  start(): Promise<void>;
  stop(): Promise<void>;
  on(listener: (change: StoreChange) => void): () => void;
}

export function createListener(options: { url: string; log: Logger; clock: Clock }): Listener {
  const listeners = new Set<(change: StoreChange) => void>();
  const stopping = new AbortController();
  let client: pg.Client | undefined;
  let loop: Promise<void> | undefined;
  let attempted!: () => void;
  const firstAttempt = new Promise<void>((resolve) => (attempted = resolve));

  const tell = (change: StoreChange) => {
    for (const listener of listeners) listener(change);
  };

  /** Connects and listens (`listening` is called once it does); resolves when the connection ends. */
  async function session(listening: () => void): Promise<void> {
    const current = new pg.Client({ connectionString: driverUrl(options.url), connectionTimeoutMillis: 10_000, application_name: `${APPLICATION_NAME} listener` });
    client = current;
    const ended = new Promise<void>((resolve) => {
      current.once('end', () => resolve());
      current.on('error', () => resolve());
    });
    current.on('notification', (message) => {
      if (message.channel === CHANNEL && message.payload !== undefined && CHANGES.has(message.payload)) tell(message.payload as StoreChange);
    });
    // A client ended while it connects (by stop) never settles its connect(): its end counts too.
    let failure: unknown;
    const connected = current.connect().then(() => true, (error: unknown) => {
      failure = error;
      return false;
    });
    if (!(await Promise.race([connected, ended.then(() => false)]))) {
      if (failure !== undefined) throw failure;
      return;
    }
    await current.query(`LISTEN ${CHANNEL}`);
    listening();
    // What was notified while this replica was not listening is unknown: look at everything once.
    tell('outbox');
    tell('roles');
    await ended;
  }

  async function run(): Promise<void> {
    let delay = 1000;
    // An operator hears of a run of failures once, and of its end: not of every attempt in between.
    let failing = false;
    const listening = () => {
      if (failing) options.log.info('listening for other replicas\' changes again');
      failing = false;
      attempted();
    };
    while (!stopping.signal.aborted) {
      const started = options.clock.now();
      try {
        await session(listening);
      } catch (error) {
        const err = describeError(error);
        if (failing || stopping.signal.aborted) options.log.debug({ err }, 'cannot listen for other replicas\' changes; trying again');
        else {
          failing = true;
          options.log.warn({ err }, 'cannot listen for other replicas\' changes; until it can, this replica finds their due deliveries and given-up roles by looking every few seconds; trying again');
        }
      }
      attempted();
      await client?.end().catch(() => {});
      client = undefined;
      if (stopping.signal.aborted) return;
      // A session that lasted resets the back-off; one that failed at once doubles it, to 30 s.
      delay = options.clock.now() - started > 30_000 ? 1000 : Math.min(delay * 2, 30_000);
      await options.clock.sleep(delay, stopping.signal).catch(() => {});
    }
  }

  return {
    async start() {
      loop ??= run();
      await firstAttempt;
    },
    async stop() {
      stopping.abort();
      await client?.end().catch(() => {});
      await loop;
    },
    on(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
