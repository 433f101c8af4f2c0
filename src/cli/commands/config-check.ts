import type { Command } from 'commander';
import { stringify } from 'yaml';
import { maskSecrets } from '../../config/index.js';
import { isBridgeError } from '../../errors.js';
import { CliExit } from '../errors.js';
import { globalOptions, loadCliConfig } from '../context.js';

export function registerConfigCommand(program: Command): void {
  const config = program.command('config').description('inspect the configuration');
  config
    .command('check')
    .description('validate the config; print it resolved, with defaults and secrets masked (exit 0), or the errors (exit 2)')
    .option('--json', 'print JSON instead of YAML')
    .action((options: { json?: boolean }, command: Command) => {
      try {
        const { file, config: resolved } = loadCliConfig(globalOptions(command));
        const masked = maskSecrets(resolved);
        process.stdout.write(options.json ? `${JSON.stringify(masked, null, 2)}\n` : `# ${file}: valid\n${stringify(masked)}`);
      } catch (error) {
        if (isBridgeError(error) && error.code.startsWith('config.')) throw new CliExit(2, error.message);
        throw error;
      }
    });
}
