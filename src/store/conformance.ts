import { describe } from 'vitest';
import { inboxCases } from './conformance/inbox.js';
import { outboxCases } from './conformance/outbox.js';
import { snapshotCases } from './conformance/snapshot.js';
import { stateCases } from './conformance/state.js';
import { streamCases } from './conformance/streams.js';
import { harness, type StoreFactory } from './conformance/support.js';
import { webhookCases } from './conformance/webhooks.js';

export { event, freshRows, record, textOf, type StoreFactory } from './conformance/support.js';
export { streamCases } from './conformance/streams.js';
export { harness } from './conformance/support.js';

/**
 * The store's promises as one suite, run against every engine (sqlite.test.ts, postgres.test.ts):
 * the same cases, the same expected results, one file of cases per part of the port.
 */
export function describeStoreConformance(engine: string, factory: StoreFactory): void {
  describe(`store conformance: ${engine}`, () => {
    const h = harness(factory);
    inboxCases(h);
    outboxCases(h);
    webhookCases(h);
    snapshotCases(h);
    streamCases(h);
    stateCases(h);
  });
}
