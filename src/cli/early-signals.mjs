// Plain JavaScript: bin/schoolbridge.js runs it before any TypeScript is loaded.

/** Marks the handlers installed here, so that `start` finds and removes them from any copy of this module. */
export const EARLY_SIGNAL = Symbol.for('schoolbridge.earlySignal');

export const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/** Options of the program that take a value (`-c file`): their value is not the command. */
const WITH_VALUE = new Set(['-c', '--config']);

/** The command named in `args` (process.argv after node and the script): its first word that is not an option. */
export function commandOf(args) {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (WITH_VALUE.has(arg)) i += 1;
    else if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

/**
 * `start` stops on SIGTERM, SIGINT and SIGHUP with exit 0 (README "Commands"). Until its own
 * handlers are in (it loads its code and reads its config first), such a signal ends it at once,
 * with 0 as well: nothing has started yet. Node.js would end it by the signal (143 for SIGTERM), and
 * a supervisor would count that as a failure. Other commands keep Node.js's own handling.
 */
export function stopEarly(args) {
  if (commandOf(args) !== 'start') return;
  const early = () => process.exit(0);
  early[EARLY_SIGNAL] = true;
  for (const name of STOP_SIGNALS) process.on(name, early);
}

/** Removes the handlers `stopEarly` installed: `start` has its own in. */
export function releaseEarly() {
  for (const name of STOP_SIGNALS) {
    for (const listener of process.listeners(name)) if (listener[EARLY_SIGNAL]) process.off(name, listener);
  }
}
