import { Argument, type Command } from 'commander';
import { bashCompletion, zshCompletion } from '../completion.js';

export function registerCompletionCommand(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script')
    .addArgument(new Argument('<shell>', 'bash or zsh').choices(['bash', 'zsh']))
    .addHelpText('after', `
Install:
  bash:  schoolbridge completion bash > ~/.local/share/bash-completion/completions/schoolbridge
         (or: source <(schoolbridge completion bash) in ~/.bashrc)
  zsh:   schoolbridge completion zsh > "\${fpath[1]}/_schoolbridge"
         (or: source <(schoolbridge completion zsh) in ~/.zshrc, after compinit)`)
    .action((shell: 'bash' | 'zsh') => {
      process.stdout.write(shell === 'bash' ? bashCompletion(program) : zshCompletion(program));
    });
}
