import type { Command } from 'commander';
import { stringify } from 'yaml';
import { configWarnings, maskSecrets, type LoadedConfig } from '../../config/index.js';
import { isBridgeError } from '../../errors.js';
import { CliExit } from '../errors.js';
import { runConnectChecks } from '../connect-checks.js';
import { embeddedHolder, globalOptions, loadCliConfig } from '../context.js';

export function registerConfigCommand(program: Command): void {
  const config = program.command('config').description('inspect the configuration');
  config
    .command('check')
    .description('validate the config; print it resolved, with defaults and secrets masked (exit 0), or the errors (exit 2)')
    .option('--json', 'print JSON instead of YAML')
    .option('--connect', 'also reach the store, the upstream (with the credentials) and every connector\'s target; exit 1 if any fails')
    .action(async (options: { json?: boolean; connect?: boolean }, command: Command) => {
      let loaded: LoadedConfig;
      try {
        loaded = loadCliConfig(globalOptions(command));
      } catch (error) {
        if (isBridgeError(error) && error.code.startsWith('config.')) throw new CliExit(2, error.message);
        throw error;
      }
      const masked = maskSecrets(loaded.config);
      // YAML comments, so that the output stays a config; on stderr beside JSON.
      const warnings = configWarnings(loaded.config);
      if (options.json) for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
      const header = `# ${loaded.file}: valid\n${warnings.map((w) => `# warning: ${w}\n`).join('')}`;
      if (!options.connect) {
        process.stdout.write(options.json ? `${JSON.stringify(masked, null, 2)}\n` : `${header}${stringify(masked)}`);
        return;
      }
      const checks = await runConnectChecks(loaded.config, await embeddedHolder(loaded.config));
      if (options.json) process.stdout.write(`${JSON.stringify({ file: loaded.file, checks }, null, 2)}\n`);
      else process.stdout.write(`${header}${checks.map((c) => `${c.ok ? 'ok  ' : 'FAIL'}  ${c.item}: ${c.detail}`).join('\n')}\n`);
      const failed = checks.filter((c) => !c.ok).length;
      if (failed > 0) throw new CliExit(1, `${failed} of ${checks.length} checks failed`);
    });
}
