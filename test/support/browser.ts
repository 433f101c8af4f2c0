import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (installed by .ci/run); playwright-core drives it, no browser download. */
export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));

/**
 * Whether the browser tests run: wherever Chromium is installed, and always in CI, where a missing
 * Chromium fails them (launchChromium) rather than skipping them. On a developer's machine without
 * it they are skipped, and vitest lists them as skipped.
 */
export const BROWSER_TESTS = Boolean(CHROMIUM || process.env.CI);

export async function launchChromium(): Promise<Browser> {
  if (!CHROMIUM) throw new Error('Chromium is not installed (apt-get install chromium); .ci/run installs it');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
