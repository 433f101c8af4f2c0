import { CommanderError } from 'commander';
import { describeError, isBridgeError } from '../errors.js';
import { CliExit } from './errors.js';
import { createProgram } from './program.js';

/**
 * The process entry: runs one command, turns any failure into one clear stderr line (a stack trace
 * only with --verbose) and an exit code.
 */
async function main(argv: string[]): Promise<number> {
  const program = createProgram();
  const verbose = argv.includes('--verbose');
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof CliExit) {
      if (error.message) process.stderr.write(`${error.message}\n`);
      return error.exitCode;
    }
    if (verbose) process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
    const message = isBridgeError(error) ? error.message : describeError(error);
    process.stderr.write(`schoolbridge: ${message}\n`);
    return isBridgeError(error) && error.code.startsWith('config.') ? 2 : 1;
  }
}

const code = await main(process.argv);
// Commands that keep the process alive (start, sandbox) return only once they have stopped. Then let
// stdout drain and leave, even if a stray handle (a keep-alive socket, a log worker) would hold us.
process.exitCode = code;
setTimeout(() => process.exit(code), 100).unref();
