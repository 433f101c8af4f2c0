import { accountingConnector } from '../../connectors/accounting/index.js';
import { fileConnector } from '../../connectors/file/index.js';
import { googleSheetsConnector } from '../../connectors/google-sheets/index.js';
import { webhookConnector } from '../../connectors/webhook/index.js';
import type { Connector } from './types.js';

/**
 * The explicit registry of connector types (STYLE 8): `type` in the config → implementation.
 * A new connector adds one line here (and its schema to src/config/schema.ts).
 */
export const connectorRegistry: Readonly<Record<string, Connector>> = {
  file: fileConnector,
  webhook: webhookConnector,
  'google-sheets': googleSheetsConnector,
  accounting: accountingConnector,
};
