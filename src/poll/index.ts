/** Poll and diff, scheduler, roster export. See README.md. */
export { createPollPart, type PollPart, type PollPartOptions, type PollStatus } from './part.js';
export { createPoller, type Poller, type PollerOptions, type RunCycleOptions } from './poller.js';
export { createRosterExporter, notSentWhy, type RosterExporter, type ExportResult } from './roster-export.js';
export { createScheduler, decideTick, type Scheduler, type ScheduledJob } from './scheduler.js';
export type { CycleResult, StreamSummaries, StreamSummary } from './cycle.js';
export type { OutboxPort, ListSource } from './ports.js';
export { diffRecords, diffRecord, deletedItem, type DiffItem, type PolledRecord } from './diff.js';
export { initialDoneKey } from './snapshot.js';
