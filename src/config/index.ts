export { configSchema, connectorConfigSchema, type Config, type ConnectorConfig } from './schema.js';
export { loadConfig, parseConfig, resolveConfigPath, EMBEDDED_DEFAULT, type Env, type LoadedConfig } from './load.js';
export { maskIn, maskSecrets, secretValues } from './mask.js';
export { formatPath } from './errors.js';
export { configWarnings } from './warnings.js';
