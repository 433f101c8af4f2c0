import { connectorRegistry } from '../connectors/registry.js';
import type { Connector } from '../connectors/types.js';
import { BridgeError } from '../errors.js';
import type { Stream } from '../records.js';

/** One configured connector: its validated config block and the type's implementation. */
export interface ConnectorInstance {
  name: string;
  streams: readonly Stream[];
  config: { name: string; type: string; streams: readonly Stream[] };
  connector: Connector;
}

type ConnectorBlock = { name: string; type: string; streams: readonly Stream[] };

/** Builds the instances of `config.connectors` from the explicit registry; an unknown type is a config error. */
export function createConnectorInstances(
  blocks: readonly ConnectorBlock[],
  registry: Readonly<Record<string, Connector>> = connectorRegistry,
): ConnectorInstance[] {
  return blocks.map((config, index) => {
    const connector = registry[config.type];
    if (!connector) {
      throw new BridgeError(
        'config.connector_type',
        `connectors[${index}].type: no connector of type "${config.type}" is available (known: ${Object.keys(registry).join(', ')})`,
      );
    }
    return { name: config.name, streams: config.streams, config, connector };
  });
}
