import { z } from 'zod';

/** The bodies of the admin routes but the outbox's (outbox/admin.ts): exactly these keys, of these types. */
export const adminBodies = {
  none: z.strictObject({}),
  dryRun: z.strictObject({ dryRun: z.boolean().optional() }),
  id: z.strictObject({ id: z.string().min(1) }),
  resync: z.strictObject({ connector: z.string().min(1), streams: z.array(z.string().min(1)).optional() }),
};
