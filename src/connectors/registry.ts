import { accountingConnector } from '../../connectors/accounting/index.js';
import { fileConnector } from '../../connectors/file/index.js';
import { googleSheetsConnector } from '../../connectors/google-sheets/index.js';
import { webhookConnector } from '../../connectors/webhook/index.js';
import type { Connector } from './types.js';

/**
 * The explicit registry of connector types: `type` in the config → implementation. A new connector
 * adds one entry here; the config schema's union of connector blocks is made from this list.
 */
export const connectorTypes = [fileConnector, webhookConnector, googleSheetsConnector, accountingConnector] as const;

export const connectorRegistry: Readonly<Record<string, Connector>> = Object.fromEntries(connectorTypes.map((connector) => [connector.type, connector]));
