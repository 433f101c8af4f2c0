import type { Command } from 'commander';
import { registerConfigCommand } from './config-check.js';
import { registerSandboxCommand } from './sandbox.js';
import { registerStartCommand } from './start.js';

/** The explicit registry of CLI commands; each command lives in its own file. */
export const commandRegistrations: ((program: Command) => void)[] = [
  registerStartCommand,
  registerConfigCommand,
  registerSandboxCommand,
];
