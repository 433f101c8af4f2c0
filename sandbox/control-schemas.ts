import { z } from 'zod';

/** Bodies of the `/_sandbox/` control API: validated, so a typo is a 400 naming the field, not a no-op. */
const flag = z.union([z.literal(0), z.literal(1)]);
const text = z.string().nullable();

const person = {
  firstName: text.optional(),
  lastName: text.optional(),
  email: text.optional(),
  phone: text.optional(),
  mobile: text.optional(),
  street: text.optional(),
  zipCode: text.optional(),
  city: text.optional(),
  language: z.string().optional(),
  login: z.string().min(1).optional(),
};

export const studentInputSchema = z.strictObject({ ...person, schoolId: z.number().int().optional(), isAdult: flag.optional() });
export const studentPatchSchema = z.strictObject({ ...person, isActive: flag.optional(), isAdult: flag.optional(), isArchived: flag.optional() });
export const userPatchSchema = z.strictObject({ ...person, isArchived: flag.optional() });
export const groupSchema = z.strictObject({ name: z.string().min(1).optional(), teacherUserId: z.number().int().nullable().optional() });

const faultTarget = {
  route: z.string().optional(),
  times: z.union([z.number().int().min(1), z.literal('always')]).optional(),
};

export const faultSchema = z.discriminatedUnion('kind', [
  z.strictObject({ ...faultTarget, kind: z.literal('latency'), ms: z.number().min(0) }),
  z.strictObject({
    ...faultTarget, kind: z.literal('status'), status: z.number().int().min(100).max(599),
    retryAfterSeconds: z.number().min(0).optional(), message: z.string().optional(),
  }),
  z.strictObject({ ...faultTarget, kind: z.literal('rateLimit'), retryAfterSeconds: z.number().min(0).optional() }),
  z.strictObject({ ...faultTarget, kind: z.literal('malformedJson') }),
  z.strictObject({ ...faultTarget, kind: z.literal('truncatedJson') }),
  z.strictObject({ ...faultTarget, kind: z.literal('reset') }),
  z.strictObject({ ...faultTarget, kind: z.literal('emptyList') }),
  z.strictObject({ ...faultTarget, kind: z.literal('body'), body: z.unknown(), status: z.number().int().min(100).max(599).optional() }),
]);

export const eventSchema = z.strictObject({ event: z.string().min(1), object: z.unknown() });
export const fieldsSchema = z.record(z.string(), z.unknown());
export const tokenSchema = z.strictObject({ ttlSeconds: z.number().int().min(0).optional() });
