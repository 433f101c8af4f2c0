import { unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { Agent, type Dispatcher } from 'undici';
import { systemClock } from '../clock.js';
import type { Config } from '../config/index.js';
import { maskIn, maskSecrets, secretValues } from '../config/index.js';
import { makeDir } from '../files/make-dir.js';
import { createConnectorInstances } from '../outbox/index.js';
import { describeError, isBridgeError } from '../errors.js';
import type { LockInfo } from '../store/index.js';
import { SCHEMA } from '../store/postgres/schema.js';
import { driverUrl, sslFileProblem } from '../store/postgres/ssl-mode.js';
import { createSchemaFix, ownSchemaFix } from '../store/postgres/schema-grants.js';
import { createUpstream } from '../upstream-part.js';
import { explainFsError } from './explain.js';

/**
 * `config check --connect`: what the daemon needs from the world, tried now, each item on its own —
 * the store, the upstream with the configured credentials, and each connector's target (the same
 * checks the daemon runs for /readyz). Each says ok, or what is wrong and which key fixes it.
 */
export interface ConnectCheck {
  item: string;
  ok: boolean;
  detail: string;
}

const CONNECT_TIMEOUT_MS = 10_000;

export async function runConnectChecks(config: Config, holder: LockInfo | undefined): Promise<ConnectCheck[]> {
  const dispatcher = new Agent({ connect: { timeout: config.upstream.connectTimeoutMs } });
  try {
    return [await checkStore(config), await checkUpstream(config, holder, dispatcher), ...(await checkConnectors(config, dispatcher))];
  } finally {
    await dispatcher.close().catch(() => {});
  }
}

/**
 * What would stop the daemon's start at the schema it creates and migrates (pg-store.ts): with no
 * schema, the right to create one in the database; with one, the right to create in it.
 */
async function schemaRefusal(client: pg.Client): Promise<string | undefined> {
  const { rows: [row] } = await client.query<{ role: string; database: string; exists: boolean; may: boolean }>(
    `SELECT current_user AS role, current_database() AS database, EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS exists,
       CASE WHEN EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) THEN has_schema_privilege($1, 'CREATE')
         ELSE has_database_privilege(current_database(), 'CREATE') END AS may`, [SCHEMA]);
  if (!row || row.may) return undefined;
  const role = `"${row.role}"`;
  return row.exists
    ? `the schema ${SCHEMA} exists and ${role} may not create in it: ${ownSchemaFix(role)}`
    : `${role} may not create the schema ${SCHEMA}: ${createSchemaFix(role, `"${row.database}"`)}`;
}

async function checkStore(config: Config): Promise<ConnectCheck> {
  if (config.store.driver === 'postgres') {
    const where = String(maskSecrets(config.store.url));
    const url = config.store.url ?? '';
    const unreadable = sslFileProblem(url);
    if (unreadable) return { item: 'store', ok: false, detail: `cannot use the database at ${where}: ${unreadable}` };
    // The URL as the daemon's pool reads it: its sslmode as libpq means it (ssl-mode.ts).
    const client = new pg.Client({ connectionString: driverUrl(url), connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    try {
      await client.connect();
      const { rows } = await client.query<{ server_version: string }>('SHOW server_version');
      const answers = `PostgreSQL ${rows[0]?.server_version ?? ''} at ${where} answers`;
      const refused = await schemaRefusal(client);
      return refused ? { item: 'store', ok: false, detail: `${answers}, but ${refused}` } : { item: 'store', ok: true, detail: answers };
    } catch (error) {
      // Nothing listening is a server that is down as often as a wrong address.
      const down = ['ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH'].includes(String((error as { code?: unknown }).code)) || /timeout/i.test(String((error as Error).message));
      const fix = down ? 'is PostgreSQL running there? Else fix store.url (DATABASE_URL in the examples)' : 'fix store.url (DATABASE_URL in the examples)';
      return { item: 'store', ok: false, detail: `cannot use the database at ${where}: ${describeError(error)}; ${fix}` };
    } finally {
      await client.end().catch(() => {});
    }
  }
  // A file written and removed: it also fails on a read-only file system, which a mode check misses.
  const probe = path.join(config.store.dir, `.write-check-${process.pid}`);
  try {
    await makeDir(config.store.dir);
    await writeFile(probe, '');
    await unlink(probe);
    return { item: 'store', ok: true, detail: `store.dir ${config.store.dir} is writable` };
  } catch (error) {
    const explained = explainFsError(error, config);
    return { item: 'store', ok: false, detail: isBridgeError(explained) ? explained.message : `store.dir ${config.store.dir}: ${describeError(error)}` };
  }
}

async function checkUpstream(config: Config, holder: LockInfo | undefined, dispatcher: Dispatcher): Promise<ConnectCheck> {
  // A password written in the URL is shown as config check shows it: masked.
  const where = config.upstream.baseUrl === 'sandbox' ? (holder?.sandboxUrl ? `the daemon's sandbox ${holder.sandboxUrl}` : 'the embedded sandbox') : String(maskSecrets(config.upstream.baseUrl));
  const ownCredentials = config.upstream.baseUrl === 'sandbox' && !config.upstream.token && !config.upstream.clientId && !config.upstream.clientSecret;
  const credentials = config.upstream.token ? 'upstream.token'
    : ownCredentials ? 'its own credentials (none are set in upstream)' : 'upstream.clientId and upstream.clientSecret';
  let stop: (() => Promise<void>) | undefined;
  try {
    const log = pino({ level: 'silent' });
    const { sandbox, upstream } = await createUpstream(config, { clock: systemClock, dispatcher, log, mode: 'oneshot', sandboxUrl: config.upstream.baseUrl === 'sandbox' ? holder?.sandboxUrl : undefined });
    stop = sandbox ? () => sandbox.stop() : undefined;
    const registrations = await upstream.listWebhooks();
    return { item: 'upstream', ok: true, detail: `${where} accepts ${credentials} (${registrations.length} webhook registration${registrations.length === 1 ? '' : 's'})` };
  } catch (error) {
    // The embedded sandbox keeps its school in store.dir: a directory it cannot make is named as such.
    const explained = explainFsError(error, config);
    if (explained !== error && isBridgeError(explained)) return { item: 'upstream', ok: false, detail: `${where}: ${explained.message}` };
    const code = isBridgeError(error) ? error.code : '';
    // The embedded sandbox that could not start says why itself (its port taken, say): nothing answered.
    if (code.startsWith('sandbox.')) return { item: 'upstream', ok: false, detail: `${where}: ${describeError(error)}` };
    const status = isBridgeError(error) ? error.status : undefined;
    const fix =
      code === 'upstream.auth' ? `it refuses the credentials: fix ${credentials}`
      : code === 'upstream.network' || code === 'upstream.timeout' ? 'cannot reach it: fix upstream.baseUrl, or the network between'
      // The service is there but down or refusing load: the URL is not what to fix.
      : code === 'upstream.http' && status !== undefined && (status >= 500 || status === 429) ? `it is there but cannot answer now (HTTP ${status}): try again later`
      : 'it answers, but not as API v2 does: is upstream.baseUrl the service\'s base URL?';
    // The client's error may quote what it was given: the URL's password, a secret.
    return { item: 'upstream', ok: false, detail: `${where}: ${fix} (${maskIn(describeError(error), secretValues(config.upstream))})` };
  } finally {
    await stop?.();
  }
}

async function checkConnectors(config: Config, dispatcher: Dispatcher): Promise<ConnectCheck[]> {
  const instances = createConnectorInstances(config.connectors);
  const signal = AbortSignal.timeout(CONNECT_TIMEOUT_MS * 3);
  return Promise.all(
    instances.map(async (instance, index) => {
      const item = `connectors[${index}] ${instance.name} (${instance.connector.type})`;
      const ctx = {
        config: instance.config, dispatcher, clock: systemClock, log: pino({ level: 'silent' }), signal, metrics: new Registry(), cache: new Map(),
      };
      try {
        const result = await instance.connector.check(ctx);
        return { item, ok: result.ok, detail: result.ok ? 'ready' : result.reason };
      } catch (error) {
        return { item, ok: false, detail: describeError(error) };
      }
    }),
  );
}
