/**
 * The Google Sheets connector (docs/connectors.md): the polled streams, invoices and events are upserted into
 * one tab each, the roster replaces its tab. See README.md for options, quotas and behaviour.
 */
import type { Connector, ConnectorContext, DeliveryOutcome } from '../../src/connectors/types.js';
import { BridgeError, describeError, isBridgeError } from '../../src/errors.js';
import type { StoredRecord } from '../../src/connectors/stored-record.js';
import type { AnyRecord, RosterRecord } from '../../src/records.js';
import { classifySheetsError } from './errors.js';
import { rosterColumns, tabColumns, type UpsertStream } from './columns.js';
import { toIntent } from './intents.js';
import type { RowIntent } from './plan.js';
import { exportRoster } from './roster.js';
import { googleSheetsConfigSchema, resolveTabNames, type GoogleSheetsConfig } from './schema.js';
import { getSession, loadMeta, sessionApi, sheetsHost, type Session } from './session.js';
import { upsertTab } from './upsert.js';

export type { GoogleSheetsConfig } from './schema.js';

type Ctx = ConnectorContext<GoogleSheetsConfig>;

export function outcomeOf(error: BridgeError): DeliveryOutcome {
  if (!error.retryable) return { status: 'dead', error };
  return error.retryAfterMs === undefined ? { status: 'retry', error } : { status: 'retry', error, retryAfterMs: error.retryAfterMs };
}

function failure(error: unknown, ctx: Ctx, session?: Session): BridgeError {
  return classifySheetsError(error, ctx.clock.now(), {
    spreadsheetId: ctx.config.spreadsheetId,
    host: sheetsHost(ctx.config),
    ...(session?.client.email ? { email: session.client.email } : {}),
  });
}

/** Runs `work`; a BridgeError becomes every given record's outcome, anything else is a bug and throws. */
async function settle(ctx: Ctx, session: Session, tab: string, indexes: number[], outcomes: DeliveryOutcome[], work: () => Promise<void>): Promise<void> {
  try {
    await work();
    for (const i of indexes) outcomes[i] = { status: 'done' };
  } catch (error) {
    const bridge = failure(error, ctx, session);
    if (bridge.code === 'sheets.tab_changed') session.meta = undefined;
    if (bridge.code === 'sheets.header') session.problems.set(tab, bridge.message);
    // At debug: the outbox reports failed attempts itself, once per connector and at most once a minute
    // while they go on (delivery-report.ts), and each dead delivery; a line per try would repeat it.
    ctx.log.debug({ code: bridge.code, records: indexes.length }, describeError(bridge));
    for (const i of indexes) outcomes[i] = outcomeOf(bridge);
  }
}

async function deliverStream(ctx: Ctx, session: Session, stream: UpsertStream, items: { record: AnyRecord; index: number }[], outcomes: DeliveryOutcome[]) {
  const config = ctx.config;
  const columns = tabColumns(stream, config.columns[stream], config.onDelete);
  const intents: RowIntent[] = [];
  const indexes: number[] = [];
  for (const { record, index } of items) {
    const intent = toIntent(record, index, columns);
    if (isBridgeError(intent)) outcomes[index] = outcomeOf(intent);
    else {
      intents.push(intent);
      indexes.push(index);
    }
  }
  if (intents.length === 0) return;
  const env = { api: sessionApi(session, ctx), session, log: ctx.log };
  const job = { tab: resolveTabNames(config.tabs)[stream], columns, onDelete: config.onDelete, spreadsheetId: config.spreadsheetId };
  await settle(ctx, session, job.tab, indexes, outcomes, async () => {
    await upsertTab(env, job, intents);
    session.problems.delete(job.tab);
  });
}

async function deliverRoster(ctx: Ctx, session: Session, items: { record: RosterRecord; index: number }[], outcomes: DeliveryOutcome[]) {
  // Only the newest export matters; older ones in the batch (or already overtaken) are done.
  const newest = items.reduce((a, b) => (Date.parse(b.record.generatedAt) >= Date.parse(a.record.generatedAt) ? b : a));
  const at = Date.parse(newest.record.generatedAt);
  const indexes = items.map((i) => i.index);
  if (at < session.lastRosterAt) {
    for (const i of indexes) outcomes[i] = { status: 'done' };
    return;
  }
  const config = ctx.config;
  const env = { api: sessionApi(session, ctx), session, log: ctx.log };
  const job = { tab: resolveTabNames(config.tabs).roster, columns: rosterColumns(config.columns.roster), chunkCells: config.chunkCells, spreadsheetId: config.spreadsheetId };
  await settle(ctx, session, job.tab, indexes, outcomes, async () => {
    await exportRoster(env, job, newest.record);
    session.lastRosterAt = at;
  });
}

async function deliver(ctx: Ctx, stored: readonly StoredRecord[]): Promise<DeliveryOutcome[]> {
  const records = stored.map((s) => s.record);
  let session: Session;
  try {
    session = await getSession(ctx);
  } catch (error) {
    const bridge = failure(error, ctx);
    return records.map(() => outcomeOf(bridge));
  }
  // One delivery at a time per spreadsheet (see Session.turn), whatever delivery.concurrency says.
  const run = session.turn.then(() => deliverInTurn(ctx, session, records));
  session.turn = run.catch(() => undefined);
  return run;
}

async function deliverInTurn(ctx: Ctx, session: Session, records: readonly AnyRecord[]): Promise<DeliveryOutcome[]> {
  const outcomes: DeliveryOutcome[] = new Array<DeliveryOutcome>(records.length);
  const groups = new Map<AnyRecord['stream'], { record: AnyRecord; index: number }[]>();
  records.forEach((record, index) => {
    const list = groups.get(record.stream) ?? [];
    list.push({ record, index });
    groups.set(record.stream, list);
  });
  for (const [stream, items] of groups) {
    if (stream === 'roster') await deliverRoster(ctx, session, items as { record: RosterRecord; index: number }[], outcomes);
    else await deliverStream(ctx, session, stream, items, outcomes);
  }
  return outcomes;
}

async function check(ctx: Ctx): Promise<{ ok: true } | { ok: false; reason: string }> {
  let session: Session | undefined;
  try {
    session = await getSession(ctx);
    await loadMeta(session, sessionApi(session, ctx), true);
    return session.problems.size > 0 ? { ok: false, reason: [...session.problems.values()].join('; ') } : { ok: true };
  } catch (error) {
    try {
      return { ok: false, reason: describeError(failure(error, ctx, session)) };
    } catch {
      return { ok: false, reason: describeError(error) };
    }
  }
}

export const googleSheetsConnector = {
  type: 'google-sheets',
  configSchema: googleSheetsConfigSchema,
  batchSize: (config) => config.batchSize,
  // Deliveries to the spreadsheet take turns anyway (Session.turn): more batches would only wait.
  maxConcurrency: () => 1,
  // Rows are found and shifted by position: two replicas writing one sheet would write over each other.
  exclusive: () => true,
  check,
  deliver,
} satisfies Connector<GoogleSheetsConfig>;
