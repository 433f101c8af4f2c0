import type { Command } from 'commander';
import { registerCompletionCommand } from './completion.js';
import { registerConfigCommand } from './config-check.js';
import { registerDeliveriesCommand } from './deliveries.js';
import { registerEventsCommand } from './events.js';
import { registerExportCommand } from './export.js';
import { registerResyncCommand } from './resync.js';
import { registerSandboxCommand } from './sandbox.js';
import { registerStartCommand } from './start.js';
import { registerSyncCommand } from './sync.js';
import { registerVerifySignatureCommand } from './verify-signature.js';
import { registerWebhooksCommand } from './webhooks.js';

/** The explicit registry of CLI commands; each command lives in its own file. */
export const commandRegistrations: ((program: Command) => void)[] = [
  registerStartCommand,
  registerConfigCommand,
  registerSandboxCommand,
  registerVerifySignatureCommand,
  registerWebhooksCommand,
  registerEventsCommand,
  registerDeliveriesCommand,
  registerSyncCommand,
  registerExportCommand,
  registerResyncCommand,
  registerCompletionCommand,
];
