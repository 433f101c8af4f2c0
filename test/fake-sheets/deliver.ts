import { googleSheetsConnector } from '../../connectors/google-sheets/index.js';
import type { GoogleSheetsConfig } from '../../connectors/google-sheets/schema.js';
import { StoredRecord } from '../../src/connectors/stored-record.js';
import type { ConnectorContext, DeliveryOutcome } from '../../src/connectors/types.js';
import type { AnyRecord } from '../../src/records.js';

/** Delivers records made in memory to the Sheets connector, as the outbox would hand them over: with JSON.stringify's text. */
export function deliver(ctx: ConnectorContext<GoogleSheetsConfig>, records: readonly AnyRecord[]): Promise<DeliveryOutcome[]> {
  return googleSheetsConnector.deliver(ctx, records.map((record) => StoredRecord.of(record)));
}
