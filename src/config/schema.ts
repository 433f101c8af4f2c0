import path from 'node:path';
import { z } from 'zod';
import { validate as isValidCron } from 'node-cron';
import { connectorTypes } from '../connectors/registry.js';
import { POLLED_STREAM_NAMES } from '../streams/index.js';
import { bool, httpUrl, int, listenHost, millis, num, optionalString, publicUrl, timezone } from './fields.js';
import { readableUrl } from './mask.js';
import { sslModeProblem } from '../store/postgres/ssl-mode.js';
import { LIST_LIMIT_BYTES } from '../upstream/http.js';

/**
 * The one schema of schoolbridge's configuration (README "Configuration"): it gives the type, the defaults and
 * the error messages with key paths. Every object is strict, so a misspelled key is an error.
 */
/** The shortest `server.adminToken` accepted. */
export const ADMIN_TOKEN_MIN_LENGTH = 24;

const cron = () => z.string().refine((v) => isValidCron(v), 'not a valid cron expression (5 fields, or 6 with seconds)');

const upstreamSchema = z.strictObject({
  /** An http(s) URL, or "sandbox" to start the embedded simulated upstream in-process. */
  baseUrl: z.union([z.literal('sandbox'), httpUrl()]).default('sandbox'),
  /** Sent in the Authorization header: a line break there is refused by the HTTP client at every call. */
  token: optionalString().refine((v) => v === undefined || !/[\r\n\0]/.test(v), 'a token cannot hold a line break or a NUL (a secret file that ends with a newline?): it is sent in a header'),
  clientId: optionalString(),
  clientSecret: optionalString(),
  timeoutMs: millis().default(30000),
  connectTimeoutMs: millis().default(10000),
  /** The largest full list read (bytes, decoded): an answer that never ends fails the cycle instead of filling the store. */
  maxListBytes: int({ min: 1_048_576 }).default(LIST_LIMIT_BYTES),
});

const sandboxSchema = z.strictObject({
  /** Port of the embedded sandbox; 0 picks a free one. */
  port: int({ min: 0, max: 65535 }).default(0),
  students: int({ min: 0 }).default(40),
  seed: int().default(1),
  /** A living school: new students, edits, archivals and invoices every `activityIntervalMs`. */
  activity: bool().default(false),
  activityIntervalMs: millis().default(5000),
  /** Multiplies the webhook retry schedule (1 = the real 3 days). */
  retryTimeScale: num({ gt: 0 }).default(1),
});

const serverSchema = z.strictObject({
  host: listenHost().default('127.0.0.1'),
  port: int({ min: 0, max: 65535 }).default(8080),
  /** What the upstream calls: callbackUrl = publicUrl + "/webhooks/v2". Defaults to http://host:port. */
  publicUrl: publicUrl().optional(),
  /** Bearer token of /admin/*; absent = /admin disabled. Long enough that it cannot be guessed. */
  adminToken: z.preprocess(
    (v) => (v === '' || v === null ? undefined : v),
    z.string().min(ADMIN_TOKEN_MIN_LENGTH, `at least ${ADMIN_TOKEN_MIN_LENGTH} characters (e.g. \`openssl rand -hex 24\`), or leave it empty to disable /admin`).optional(),
  ),
  /** Headers and body of one request must arrive within this; a connection that sends nothing too. Then 408 and closed. */
  requestTimeoutMs: millis(100).default(30_000),
  /** A connection with no traffic either way for this long, while a request is handled or answered, is closed. */
  connectionTimeoutMs: millis(100).default(300_000),
  /** Connections open at once at most; more are closed as they arrive. */
  maxConnections: int({ min: 1 }).default(256),
  /**
   * Whether the operator console (its sections on `/` and /api/*) is open without the admin token.
   * It shows names and e-mails, so by default it is not. Receiver error bodies need the token anyway.
   */
  consolePublic: bool().default(false),
});

const webhooksSchema = z.strictObject({
  events: z.array(z.string().regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_.-]+$/, 'event names look like "invoice.created"')).default(['invoice.created', 'invoice.updated']),
  toleranceSeconds: int({ min: 1 }).default(300),
  previousSecrets: z.array(z.string().min(1)).default([]),
  bodyLimitBytes: int({ min: 1 }).default(1_048_576),
  prune: bool().default(true),
  /** How long a delivery's dedupe key is remembered; longer than the upstream's 3-day retry window. */
  dedupeRetentionHours: int({ min: 96 }).default(120),
  /** Register and converge our webhooks at start-up. */
  reconcileOnStart: bool().default(true),
  /** After that, check the registrations again this often (minutes; 0: only at start-up). */
  reconcileEveryMinutes: int({ min: 0, max: 10_080 }).default(15),
});

const pollSchema = z.strictObject({
  schedule: cron().default('*/5 * * * *'),
  timezone: timezone().default('Europe/Warsaw'),
  initial: z.enum(['emit', 'baseline']).default('emit'),
  maxDeleteRatio: num({ min: 0, max: 1 }).default(0.2),
  /** Run one cycle right after start-up. */
  onStart: bool().default(true),
  /**
   * Polled streams to read even when no connector takes them (docs/streams.md). Students and users
   * are always read; a stream a connector takes is read anyway.
   */
  streams: z.array(z.enum(POLLED_STREAM_NAMES)).optional(),
});

const exportSchema = z.strictObject({
  schedule: cron().default('0 2 * * *'),
  /** Defaults to poll.timezone. */
  timezone: timezone().optional(),
  /** Run one export right after start-up. */
  onStart: bool().default(false),
});

const storeSchema = z.strictObject({
  /** sqlite: one database file under `dir` (the embedded default); postgres: a shared database at `url`. */
  driver: z.enum(['sqlite', 'postgres']).default('sqlite'),
  dir: z.string().min(1).default('./data'),
  url: optionalString(),
  /** postgres: connections per process; a poll cycle holds one per stream while it stages it, hence at least 4. */
  poolSize: int({ min: 4, max: 200 }).default(10),
});

const deliverySchema = z.strictObject({
  maxAgeHours: num({ gt: 0 }).default(72),
  backoff: z
    .strictObject({ baseMs: millis().default(1000), maxMs: millis().default(3_600_000) })
    .default({ baseMs: 1000, maxMs: 3_600_000 }),
  /** Deliveries in flight at once per connector. */
  concurrency: int({ min: 1, max: 64 }).default(4),
  /** Days each delivery attempt is kept for the console's record trails, then pruned in the background. */
  historyDays: int({ min: 1, max: 3650 }).default(14),
});

const logSchema = z.strictObject({
  level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Human-readable logs; default: when stderr is a terminal. */
  pretty: bool().optional(),
});

type ConfigSchemas<T extends readonly { configSchema: unknown }[]> = { -readonly [K in keyof T]: T[K]['configSchema'] };

/** One connector block: the union of every registered type's schema, told apart by `type`. */
export const connectorConfigSchema = z.discriminatedUnion(
  'type',
  connectorTypes.map((connector) => connector.configSchema) as ConfigSchemas<typeof connectorTypes>,
);

export const configSchema = z
  .strictObject({
    upstream: upstreamSchema.default(upstreamSchema.parse({})),
    sandbox: sandboxSchema.default(sandboxSchema.parse({})),
    server: serverSchema.default(serverSchema.parse({})),
    webhooks: webhooksSchema.default(webhooksSchema.parse({})),
    poll: pollSchema.default(pollSchema.parse({})),
    export: exportSchema.default(exportSchema.parse({})),
    store: storeSchema.default(storeSchema.parse({})),
    delivery: deliverySchema.default(deliverySchema.parse({})),
    log: logSchema.default(logSchema.parse({})),
    connectors: z.array(connectorConfigSchema).default([]),
  })
  .superRefine((config, ctx) => {
    const { upstream } = config;
    if (upstream.baseUrl !== 'sandbox') {
      const credentials = !upstream.token && !(upstream.clientId && upstream.clientSecret);
      // A client id without its secret names the secret, not upstream.token. (A secret alone may be
      // there for the webhooks only, beside a token: then the token is what is missing.)
      if (credentials && upstream.clientId) {
        ctx.addIssue({ code: 'custom', path: ['upstream', 'clientSecret'], message: 'required with upstream.clientId (or set upstream.token)' });
      } else if (credentials) {
        ctx.addIssue({
          code: 'custom',
          path: ['upstream', 'token'],
          message: 'required: set upstream.token, or upstream.clientId and upstream.clientSecret',
        });
      }
      if (!upstream.clientSecret && config.webhooks.events.length > 0 && !(credentials && upstream.clientId)) {
        ctx.addIssue({
          code: 'custom',
          path: ['upstream', 'clientSecret'],
          message: 'required: webhook deliveries are verified with the client secret (or set webhooks.events: [])',
        });
      }
    }
    if (config.store.driver === 'postgres' && !/^postgres(ql)?:\/\//.test(config.store.url ?? '')) {
      // The URL itself is not repeated: it may hold a password.
      const message = config.store.url === undefined
        ? 'required with store.driver: postgres: a postgres://user:password@host:5432/database URL'
        : 'must start with postgres:// or postgresql:// (postgres://user:password@host:5432/database)';
      ctx.addIssue({ code: 'custom', path: ['store', 'url'], message });
    } else if (config.store.driver === 'postgres' && !readableUrl(config.store.url!)) {
      ctx.addIssue({
        code: 'custom',
        path: ['store', 'url'],
        message: 'cannot be read as a URL: percent-encode the special characters of the user name and password (/ as %2F, # as %23, ? as %3F, @ as %40, : as %3A)',
      });
    } else if (config.store.driver === 'postgres') {
      const problem = sslModeProblem(config.store.url!);
      if (problem) ctx.addIssue({ code: 'custom', path: ['store', 'url'], message: problem });
    }
    const seen = new Map<string, number>();
    config.connectors.forEach((connector, index) => {
      const first = seen.get(connector.name);
      if (first !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['connectors', index, 'name'], message: `duplicate name (also connectors[${first}])` });
      }
      seen.set(connector.name, index);
    });
    sharedDirectories(config.connectors, ctx);
    if (upstream.baseUrl === 'sandbox' && config.sandbox.port !== 0 && config.sandbox.port === config.server.port) {
      ctx.addIssue({ code: 'custom', path: ['sandbox', 'port'], message: `the same port as server.port (${config.server.port}): the embedded sandbox listens on one of its own (0 picks a free one)` });
    }
    const { baseMs, maxMs } = config.delivery.backoff;
    if (baseMs > maxMs) {
      ctx.addIssue({ code: 'custom', path: ['delivery', 'backoff', 'maxMs'], message: `${maxMs} is less than delivery.backoff.baseMs (${baseMs}): the longest wait between tries cannot be shorter than the first` });
    }
  });

/**
 * Two connectors of one type writing one directory would write the same files, each unaware of the
 * other's lines: every record twice, and one's clean-up of a torn append cutting off the other's.
 */
function sharedDirectories(connectors: readonly { type: string; dir?: unknown; ledgerDir?: unknown }[], ctx: z.RefinementCtx): void {
  const owners = new Map<string, number>();
  connectors.forEach((connector, index) => {
    const key = connector.type === 'file' ? 'dir' : connector.type === 'accounting' ? 'ledgerDir' : undefined;
    const dir = key ? connector[key] : undefined;
    if (typeof dir !== 'string') return;
    const normal = `${connector.type}\u0000${path.normalize(dir).replace(/(.)\/+$/, '$1')}`;
    const first = owners.get(normal);
    if (first === undefined) owners.set(normal, index);
    else ctx.addIssue({ code: 'custom', path: ['connectors', index, key!], message: `the same directory as connectors[${first}]: two ${connector.type} connectors would write the same files; give each its own` });
  });
}

export type Config = z.infer<typeof configSchema>;
export type ConnectorConfig = z.infer<typeof connectorConfigSchema>;
