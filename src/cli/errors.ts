/** Ends a CLI command with an exit code and (optionally) one message line on stderr. */
export class CliExit extends Error {
  constructor(
    readonly exitCode: number,
    message = '',
  ) {
    super(message);
    this.name = 'CliExit';
  }
}
