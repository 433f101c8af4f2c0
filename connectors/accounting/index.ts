import type { StoredRecord } from '../../src/connectors/stored-record.js';
import type { Connector, ConnectorContext, DeliveryOutcome } from '../../src/connectors/types.js';
import { BridgeError, describeError } from '../../src/errors.js';
import { stringifyExact } from '../../src/json/index.js';
import { counter } from '../../src/metrics.js';
import type { AnyRecord, EventRecord } from '../../src/records.js';
import { findBuyer } from './buyer.js';
import { checkAccounting, LEDGER_PROBLEM } from './check.js';
import { buildFeedBody, feedBodyJson, isInvoiceObject, type FeedBodyV1 } from './feed.js';
import { createLedger, type Ledger } from './ledger.js';
import { postSigned } from '../../src/connectors/signed-post.js';
import { accountingConfigSchema, type AccountingConfig } from './schema.js';

type Ctx = ConnectorContext<AccountingConfig>;

/**
 * The accounting connector (docs/connectors.md, README.md): one signed, idempotent JSON POST per invoice
 * version, then, with `ledgerDir`, one ledger row. The outbox gives the order (one invoice's versions
 * one at a time, oldest first) and the retries; this file decides what one delivery is.
 */
export const accountingConnector = {
  type: 'accounting',
  configSchema: accountingConfigSchema,
  // The daily ledger files are this host's: with them, one replica at a time delivers. Without them
  // each POST stands alone (the receiver dedupes by Idempotency-Key), so every replica may.
  exclusive: (config) => config.ledgerDir !== undefined,
  check: checkAccounting,
  async deliver(ctx, records) {
    const outcomes: DeliveryOutcome[] = [];
    // Within one batch too, a later version of an invoice never goes before an earlier one that failed.
    const failedKeys = new Set<string>();
    for (const stored of records) {
      const { record } = stored;
      const orderKey = `${record.stream}:${String(record.key)}`;
      if (failedKeys.has(orderKey)) {
        outcomes.push(heldBack(record));
        continue;
      }
      const outcome = await deliverOne(ctx, stored);
      if (outcome.status !== 'done') failedKeys.add(orderKey);
      outcomes.push(outcome);
    }
    return outcomes;
  },
} satisfies Connector<AccountingConfig>;

async function deliverOne(ctx: Ctx, stored: StoredRecord): Promise<DeliveryOutcome> {
  const { record } = stored;
  const invalid = invalidReason(record);
  if (invalid) return { status: 'dead', error: new BridgeError(invalid.code, invalid.message, { context: { recordId: record.id } }) };
  const ledger = ledgerOf(ctx);
  let body: FeedBodyV1;
  try {
    const invoice = record as EventRecord;
    body = buildFeedBody(invoice, ctx.config.timezone, await findBuyer(invoice.record as Record<string, unknown>, ctx.users));
  } catch (error) {
    return { status: 'retry', error: new BridgeError('accounting.buyer', `cannot look the buyer up: ${describeError(error)}`, { retryable: true, cause: error }) };
  }
  // The invoice as its stored text: numbers reach the receiver and the ledger as received.
  const invoiceText = stored.recordText ?? stringifyExact(body.invoice);
  try {
    // A ledger row is written only after the receiver took the POST: the row proves the delivery.
    if (ledger && (await ledger.ids()).has(record.id)) return { status: 'done' };
    const { url, secret, headers, timeoutMs } = ctx.config;
    const outcome = await postSigned(record.id, feedBodyJson(body, invoiceText), {
      url, secret, headers, timeoutMs, dispatcher: ctx.dispatcher, signal: ctx.signal, now: ctx.clock.now(), code: 'accounting',
    });
    if (outcome.status !== 'done' || !ledger) return outcome;
    const result = await ledger.append(body, invoiceText);
    counter(ctx.metrics, 'schoolbridge_accounting_ledger_rows_total', 'Ledger rows by result (written, or already there)', ['connector', 'result'])
      .inc({ connector: ctx.config.name, result: result });
    if (ctx.cache.delete(LEDGER_PROBLEM)) ctx.log.info({ ledgerDir: ctx.config.ledgerDir }, 'the ledger is written again');
    return outcome;
  } catch (error) {
    // Only the ledger throws here. The POST is sent again on retry: the receiver deduplicates by Idempotency-Key.
    const cause = error instanceof BridgeError ? error : new BridgeError('accounting.ledger_write', describeError(error), { retryable: true, cause: error });
    // Once when it starts: the outbox reports the failed attempts themselves once a minute, and check() says it meanwhile.
    if (!ctx.cache.has(LEDGER_PROBLEM)) ctx.log.warn({ recordId: record.id, err: describeError(cause) }, 'ledger append failed; deliveries wait until it can be written');
    ctx.cache.set(LEDGER_PROBLEM, describeError(cause));
    return { status: 'retry', error: cause };
  }
}

function invalidReason(record: AnyRecord): { code: string; message: string } | undefined {
  if (record.stream !== 'invoices' || !('event' in record)) {
    return { code: 'accounting.not_an_invoice', message: `the accounting connector takes only invoice records, not "${record.stream}"` };
  }
  if (!isInvoiceObject(record.record)) {
    return { code: 'accounting.invalid_invoice', message: `event ${record.event} carries no invoice object` };
  }
  return undefined;
}

function heldBack(record: AnyRecord): DeliveryOutcome {
  return {
    status: 'retry',
    error: new BridgeError('accounting.held_back', 'an earlier version of this invoice has not been delivered yet', {
      retryable: true, context: { recordId: record.id },
    }),
  };
}

/** One ledger per connector instance, kept in its cache (connectors are plain objects). */
function ledgerOf(ctx: Ctx): Ledger | undefined {
  const { ledgerDir, timezone } = ctx.config;
  if (!ledgerDir) return undefined;
  let ledger = ctx.cache.get('accounting.ledger') as Ledger | undefined;
  if (!ledger) {
    ledger = createLedger({ dir: ledgerDir, timeZone: timezone, log: ctx.log, format: ctx.config.csv });
    ctx.cache.set('accounting.ledger', ledger);
  }
  return ledger;
}

export { accountingConfigSchema, type AccountingConfig } from './schema.js';
export { FEED_SCHEMA_VERSION, type FeedBodyV1 } from './feed.js';
export { LEDGER_COLUMNS } from './ledger-row.js';
