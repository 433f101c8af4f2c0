import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProgram } from '../src/cli/program.js';
import { VERSION } from '../src/version.js';
import { tempDir } from './support/temp.js';

/**
 * `--version` and shell completion, run in real bash and zsh (.ci/run installs zsh). A case is the
 * words typed so far, the last being the one completed. zsh runs the function through bashcompinit,
 * which hands it the words as a 1-based array and leaves the prefix match to compadd: the zsh
 * harness does what those do.
 */
const BIN = path.resolve('bin/schoolbridge.js');

function run(file: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
  });
}

const BASH = `source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMPREPLY=()
_schoolbridge schoolbridge "\${COMP_WORDS[COMP_CWORD]}" "\${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\\n' "\${COMPREPLY[@]}"`;

const ZSH = `autoload -U compinit && compinit -u -D
source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMPREPLY=()
_schoolbridge schoolbridge "\${@[-1]}" "\${@[-2]}"
print -l -- \${(M)COMPREPLY:#\${@[-1]}*}`;

const CASES: [string[], string[]][] = [
  [['del'], ['deliveries']],
  [['deliveries', ''], ['list', 'retry', 'help', '-h', '--help']],
  [['-c', 'my.yaml', 'deliveries', 'r'], ['retry']],
  [['--verbose', 'webhooks', 'l'], ['list']],
  [['deliveries', 'list', '--s'], ['--state']],
  [['completion', ''], ['bash', 'zsh', '-h', '--help']],
  [['sync', '--'], ['--dry-run', '--json', '--help']],
  [['-V'], ['-V']],
  // The value of an option: nothing of ours (the shell falls back to file names).
  [['-c', ''], []],
  [['sync', '--config', ''], []],
];

let dir: string;
let cleanup: () => Promise<void>;
const scripts: Record<'bash' | 'zsh', string> = { bash: '', zsh: '' };

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('sb-completion-'));
  for (const shell of ['bash', 'zsh'] as const) {
    const printed = await run(process.execPath, [BIN, 'completion', shell]);
    expect(printed).toMatchObject({ code: 0, stderr: '' });
    scripts[shell] = path.join(dir, `completion.${shell}`);
    await writeFile(scripts[shell], printed.stdout);
    await writeFile(path.join(dir, `harness.${shell}`), shell === 'bash' ? BASH : ZSH);
  }
});
afterAll(async () => cleanup?.());

describe('the command line', () => {
  it('prints its version with --version and -V', async () => {
    expect(await run(process.execPath, [BIN, '--version'])).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
    expect(await run(process.execPath, [BIN, '-V'])).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  });

  it('completes every command it has, from the executable down', () => {
    const top = createProgram().commands.map((c) => c.name());
    expect(top).toEqual(expect.arrayContaining(['start', 'sync', 'deliveries', 'completion', 'webhooks', 'events', 'export', 'config', 'sandbox', 'verify-signature']));
  });

  describe.each(['bash', 'zsh'] as const)('in %s', (shell) => {
    it.each(CASES)('schoolbridge %j → %j', async (typed, expected) => {
      const { code, stdout, stderr } = await run(`/bin/${shell}`, [shell === 'zsh' ? '-f' : '--norc', path.join(dir, `harness.${shell}`), scripts[shell], 'schoolbridge', ...typed]);
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect(stdout.split('\n').filter(Boolean).sort()).toEqual([...expected].sort());
    });
  });
});
