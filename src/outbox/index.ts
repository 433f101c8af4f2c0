export { createOutbox, type Outbox, type OutboxOptions, type OutboxEvent, type OutboxEventPayload, type ConnectorSummary } from './outbox.js';
export { createConnectorInstances, type ConnectorInstance } from './connector-instance.js';
export { DELIVERED, ENTRIES, RECORDS, type OutboxEntry, type EntryStatus } from './entry.js';
export { listEntries, type ListFilter, type ListedEntry } from './list.js';
export { backoffDelay, nextAttempt, type RetryPolicy } from './retry-policy.js';
export { adminList, adminRetry, type AdminAnswer } from './admin.js';
export { formatDeliveries } from './format.js';
