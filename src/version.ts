import { readFileSync } from 'node:fs';

/** The version of this schoolbridge, as package.json states it. */
export const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
