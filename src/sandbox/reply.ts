import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TakenFaults } from './faults.js';
import type { ErrorAnswer } from './http-errors.js';

/**
 * Answers of the API routes. Successful bodies go through `sendData`, which streams pre-rendered
 * buffers (a 100,000-student list is never one string) and applies a pending truncation fault.
 */
const pendingFaults = new WeakMap<FastifyRequest, NonNullable<TakenFaults['fault']>>();

export function setPendingFault(request: FastifyRequest, fault: NonNullable<TakenFaults['fault']>): void {
  pendingFaults.set(request, fault);
}

export function pendingFault(request: FastifyRequest): TakenFaults['fault'] {
  return pendingFaults.get(request);
}

export function sendError(reply: FastifyReply, answer: ErrorAnswer): FastifyReply {
  return reply.code(answer.status).type('application/json; charset=utf-8').send(JSON.stringify(answer.body));
}

export function sendJson(request: FastifyRequest, reply: FastifyReply, value: unknown): FastifyReply {
  return sendData(request, reply, [Buffer.from(JSON.stringify(value))]);
}

export function sendData(request: FastifyRequest, reply: FastifyReply, chunks: Buffer[]): FastifyReply {
  let body = chunks;
  if (pendingFault(request)?.kind === 'truncatedJson') body = truncate(chunks);
  const length = body.reduce((sum, chunk) => sum + chunk.length, 0);
  reply.code(200).type('application/json; charset=utf-8').header('content-length', length);
  return reply.send(body.length === 1 ? body[0] : Readable.from(body));
}

/** The first half of the body (by bytes): valid HTTP, unparseable JSON. */
function truncate(chunks: Buffer[]): Buffer[] {
  const whole = Buffer.concat(chunks);
  return [whole.subarray(0, Math.max(1, Math.floor(whole.length / 2)))];
}

/** Whether an empty-list fault is pending for this request (list routes only). */
export function wantsEmptyList(request: FastifyRequest): boolean {
  return pendingFault(request)?.kind === 'emptyList';
}
