import { Command } from 'commander';
import { VERSION } from '../version.js';
import { commandRegistrations } from './commands/index.js';

export function createProgram(): Command {
  const program = new Command('schoolbridge')
    .description("bridges a language school's API v2 to Google Sheets, accounting, files and any HTTP endpoint")
    .option('-c, --config <file>', 'config file (default: $SCHOOLBRIDGE_CONFIG, ./config/schoolbridge.yaml, else the embedded default)')
    .option('--verbose', 'debug logs, and stack traces on errors')
    .version(VERSION, '-V, --version', 'print the version')
    .showHelpAfterError('(add --help for usage)')
    .exitOverride();
  for (const register of commandRegistrations) register(program);
  return program;
}
