import type { FastifyInstance, FastifyReply } from 'fastify';
import type { z } from 'zod';
import { CONTROL_ENDPOINTS } from './control-endpoints.js';
import * as schemas from './control-schemas.js';
import type { SandboxControl } from './types.js';
import type { Fault } from './types.js';
import type { SandboxCore } from './core.js';

/**
 * The `/_sandbox/` control API over HTTP: JSON in, JSON out, each route one call of SandboxControl.
 * Unknown ids answer 404 (the control's BridgeError), invalid bodies 400 naming the field.
 */
type Params = { id: string };

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  return schema.parse(body ?? {});
}

const idOf = (params: unknown): number => Number((params as Params).id);

export function registerControlRoutes(app: FastifyInstance, control: SandboxControl, core: SandboxCore): void {
  const done = (reply: FastifyReply) => reply.code(200).send({ ok: true });
  app.get('/_sandbox', async () => ({ endpoints: CONTROL_ENDPOINTS }));

  app.get('/_sandbox/invoices', async () => control.invoices());
  app.post('/_sandbox/invoices', async (request) => control.createInvoice(parse(schemas.fieldsSchema, request.body)));
  app.patch('/_sandbox/invoices/:id', async (request) =>
    control.updateInvoice(idOf(request.params), parse(schemas.fieldsSchema, request.body)));
  app.post('/_sandbox/events', async (request) => {
    const { event, object } = parse(schemas.eventSchema, request.body);
    return { deliveries: control.fireEvent(event, object) };
  });

  app.get('/_sandbox/students', async () => control.students());
  app.post('/_sandbox/students', async (request) => control.createStudent(parse(schemas.studentInputSchema, request.body)));
  app.patch('/_sandbox/students/:id', async (request) =>
    control.updateStudent(idOf(request.params), parse(schemas.studentPatchSchema, request.body)));
  app.post('/_sandbox/students/:id/archive', async (request) => control.archiveStudent(idOf(request.params)));
  app.delete('/_sandbox/students/:id', async (request, reply) => {
    control.deleteStudent(idOf(request.params));
    return done(reply);
  });

  app.get('/_sandbox/users', async () => control.users());
  app.patch('/_sandbox/users/:id', async (request) => control.updateUser(idOf(request.params), parse(schemas.userPatchSchema, request.body)));
  app.post('/_sandbox/users/:id/archive', async (request) => control.archiveUser(idOf(request.params)));
  app.delete('/_sandbox/users/:id', async (request, reply) => {
    control.deleteUser(idOf(request.params));
    return done(reply);
  });

  app.get('/_sandbox/groups', async () => control.groups());
  app.post('/_sandbox/groups', async (request) => control.createGroup(parse(schemas.groupSchema, request.body)));
  app.patch('/_sandbox/groups/:id', async (request) => control.updateGroup(idOf(request.params), parse(schemas.groupSchema, request.body)));
  app.delete('/_sandbox/groups/:id', async (request, reply) => {
    control.deleteGroup(idOf(request.params));
    return done(reply);
  });

  registerMachineryRoutes(app, control, core);
}

function registerMachineryRoutes(app: FastifyInstance, control: SandboxControl, core: SandboxCore): void {
  const done = (reply: FastifyReply) => reply.code(200).send({ ok: true });
  app.get('/_sandbox/webhooks', async () => control.webhooks());
  app.get('/_sandbox/faults', async () => control.faults());
  app.post('/_sandbox/faults', async (request, reply) => {
    control.injectFault(parse(schemas.faultSchema, request.body) as Fault);
    return done(reply);
  });
  app.delete('/_sandbox/faults', async (_request, reply) => {
    control.clearFaults();
    return done(reply);
  });
  app.post('/_sandbox/tokens', async (request) => control.issueToken(parse(schemas.tokenSchema, request.body).ttlSeconds));
  app.post('/_sandbox/tokens/revoke', async (_request, reply) => {
    control.revokeTokens();
    return done(reply);
  });
  app.post('/_sandbox/tokens/expire', async (_request, reply) => {
    control.expireTokens();
    return done(reply);
  });
  app.get('/_sandbox/deliveries', async () => control.deliveryLog());
  app.post('/_sandbox/deliveries/flush', async (_request, reply) => {
    await control.flushDeliveries();
    return done(reply);
  });
  app.get('/_sandbox/requests', async () => Object.fromEntries(core.requestCounts));
}
