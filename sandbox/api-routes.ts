import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { POLLED_STREAMS } from '../src/streams/index.js';
import type { SandboxCore } from './core.js';
import { fieldsOf, optionalEmail, optionalText, readAll, requiredId, requiredText, type Fields } from './fields.js';
import { invalidParameter, missingParameter, notFound } from './http-errors.js';
import { listEnvelope } from './list-cache.js';
import { listBodies } from './lists.js';
import { sendData, sendError, sendJson, wantsEmptyList } from './reply.js';
import * as roster from './roster-ops.js';
import type { Student } from './types.js';
import { studentWriteView } from './views.js';
import { EVENT_PATTERN, isCallbackUrl } from './webhook-registry.js';

/** The API v2 resource routes (docs/upstream.md "Endpoints"), all behind the bearer check. */
export function registerApiRoutes(app: FastifyInstance, core: SandboxCore): void {
  const { school } = core;
  const query = (request: FastifyRequest): Fields => fieldsOf(request.query);

  // The full lists, where the streams' descriptions say (src/streams/).
  const bodies = listBodies(core);
  for (const stream of POLLED_STREAMS) {
    const { prefix, suffix } = listEnvelope(stream.list.array);
    const empty = Buffer.concat([prefix, suffix]);
    app.get(stream.list.path, async (request, reply) => sendData(request, reply, wantsEmptyList(request) ? empty : bodies[stream.name]()));
  }

  app.get('/api/v2/student', async (request, reply) => {
    const id = requiredId(query(request));
    if (!id.ok) return sendError(reply, id.answer);
    const student = school.student(id.value);
    return student ? sendJson(request, reply, { data: { student } }) : sendError(reply, notFound('Student'));
  });

  app.post('/api/v2/student', async (request, reply) => {
    const fields = fieldsOf(request.body);
    const read = readAll({
      firstName: requiredText(fields, 'firstname'),
      lastName: requiredText(fields, 'lastname'),
      email: optionalEmail(fields),
      schoolId: fields.schoolId === undefined || /^\d+$/.test(fields.schoolId.trim())
        ? { ok: true as const, value: fields.schoolId }
        : { ok: false as const, answer: invalidParameter('schoolId') },
    });
    if (!read.ok) return sendError(reply, read.answer);
    const { firstName, lastName, email } = read.value;
    const student = roster.createStudent(school, { firstName, lastName, ...(email ? { email } : {}) }, core.now(), core.random);
    return sendWrite(request, reply, student);
  });

  app.patch('/api/v2/student', async (request, reply) => {
    const fields = fieldsOf(request.body);
    const id = requiredId({ ...fields, ...query(request) });
    if (!id.ok) return sendError(reply, id.answer);
    const read = readAll({
      firstName: optionalText(fields, 'firstname'),
      lastName: optionalText(fields, 'lastname'),
      email: optionalEmail(fields),
    });
    if (!read.ok) return sendError(reply, read.answer);
    if (!school.student(id.value)) return sendError(reply, notFound('Student'));
    const patch = Object.fromEntries(Object.entries(read.value).filter(([, value]) => value !== undefined));
    return sendWrite(request, reply, roster.updateStudent(school, id.value, patch, core.now()));
  });

  registerWebhookRoutes(app, core);
}

/** Create and update answers carry fresh one-time passwords for the student and the parent. */
function sendWrite(request: FastifyRequest, reply: FastifyReply, student: Student): Promise<FastifyReply> {
  const passwords = { student: oneTimePassword(), parent: oneTimePassword() };
  return sendJson(request, reply, { data: { student: studentWriteView(student, passwords) } });
}

function oneTimePassword(): string {
  return randomBytes(9).toString('base64url');
}

function registerWebhookRoutes(app: FastifyInstance, core: SandboxCore): void {
  app.get('/api/v2/webhooks', async (request, reply) =>
    wantsEmptyList(request)
      ? sendData(request, reply, Buffer.from('{"data":{"webhooks":[]}}'))
      : sendJson(request, reply, { data: { webhooks: core.webhooks.list() } }));

  app.post('/api/v2/webhook', async (request, reply) => {
    const fields = fieldsOf(request.body);
    const { event, callbackUrl } = fields;
    if (event === undefined || event === '') return sendError(reply, missingParameter('event'));
    if (!EVENT_PATTERN.test(event)) return sendError(reply, invalidParameter('event'));
    if (callbackUrl === undefined || callbackUrl === '') return sendError(reply, missingParameter('callbackUrl'));
    if (!isCallbackUrl(callbackUrl)) return sendError(reply, invalidParameter('callbackUrl'));
    const webhook = core.webhooks.register(event, callbackUrl, core.now());
    return sendJson(request, reply, { data: { webhook } });
  });

  app.delete('/api/v2/webhook', async (request, reply) => {
    const id = requiredId(fieldsOf(request.query));
    if (!id.ok) return sendError(reply, id.answer);
    const deleted = core.webhooks.remove(id.value, core.now());
    return deleted ? sendJson(request, reply, { data: { webhook: deleted } }) : sendError(reply, notFound('Webhook'));
  });
}
