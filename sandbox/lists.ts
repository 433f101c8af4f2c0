import type { PolledStreamName } from '../src/streams/index.js';
import type { SandboxCore } from './core.js';
import type { ListBody } from './list-cache.js';

/**
 * The body of each polled stream's full list (src/streams/), served at the path its description
 * names (api-routes.ts). A stream added to the registry needs its fake list here: the type asks for
 * one per stream.
 */
export function listBodies(core: SandboxCore): Readonly<Record<PolledStreamName, () => ListBody>> {
  return {
    students: () => core.school.studentsBody(),
    users: () => core.school.usersBody(),
    groups: () => core.groups.body(),
  };
}
