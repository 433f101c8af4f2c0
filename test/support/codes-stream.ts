import { describeStream } from '../../src/streams/stream.js';
import { object, string } from '../../src/upstream/schemas.js';

/**
 * A stream whose keys are strings, for tests only: no stream of the registry has such keys yet. A
 * test file adds it to the registry with
 *   vi.mock('<path to>/src/streams/registry.js', async (original) =>
 *     (await import('<path to>/test/support/codes-stream.js')).withCodes(original))
 * which every module the file loads then sees (worker threads load the real registry). The factory
 * imports this module itself: vitest hoists it above the file's imports, which may load the registry
 * before an import of this module at the top of the file would be initialized.
 */
export const codes = describeStream({
  name: 'codes',
  list: { path: '/api/v2/codes', array: ['data', 'codes'] },
  key: { field: 'code', type: 'string' },
  schema: object({ code: string }),
  alwaysPolled: false,
  sheets: { tab: 'Codes', columns: { name: 'Name' } },
});

/** The registry module with `codes` after the registry's streams. */
export async function withCodes(original: () => Promise<unknown>): Promise<{ POLLED_STREAMS: readonly unknown[] }> {
  const registry = (await original()) as { POLLED_STREAMS: readonly unknown[] };
  return { POLLED_STREAMS: [...registry.POLLED_STREAMS, codes] };
}
