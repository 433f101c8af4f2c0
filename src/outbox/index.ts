export { createOutbox, noSuchConnector, orderKey, orderKeyOf, type Outbox, type OutboxOptions, type OutboxEvent, type OutboxEventPayload, type ConnectorSummary } from './outbox.js';
export { createConnectorInstances, type ConnectorInstance } from './connector-instance.js';
export { backoffDelay, nextAttempt, type RetryPolicy } from './retry-policy.js';
export { adminList, adminRetry, LIST_USAGE, listBody, RETRY_USAGE, RETRY_WAIT_MS, retryBody, type AdminAnswer } from './admin.js';
export { retryAndReport, type RetryReport, type RetryTarget } from './retry-report.js';
export { formatDeliveries, printable } from './format.js';
export { owedOfRanges, type OwedRange } from './owed-ranges.js';
export { publicError, errorGroup } from './public-error.js';
