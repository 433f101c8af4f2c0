export const EARLY_SIGNAL: unique symbol;
export const STOP_SIGNALS: readonly ['SIGTERM', 'SIGINT', 'SIGHUP'];
export function commandOf(args: readonly string[]): string | undefined;
export function stopEarly(args: readonly string[]): void;
export function releaseEarly(): void;
