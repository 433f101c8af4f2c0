import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TakenFaults } from './faults.js';
import type { ErrorAnswer } from './http-errors.js';
import type { ListBody } from './list-cache.js';

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

export function sendJson(request: FastifyRequest, reply: FastifyReply, value: unknown): Promise<FastifyReply> {
  return sendData(request, reply, Buffer.from(JSON.stringify(value)));
}

export async function sendData(request: FastifyRequest, reply: FastifyReply, body: Buffer | ListBody): Promise<FastifyReply> {
  reply.code(200).type('application/json; charset=utf-8');
  if (pendingFault(request)?.kind === 'truncatedJson') {
    const whole = Buffer.isBuffer(body) ? body : await collect(body.chunks);
    // The first half (by bytes), with a matching Content-Length: valid HTTP, unparseable JSON.
    return reply.header('content-length', whole.length >> 1).send(whole.subarray(0, whole.length >> 1));
  }
  if (Buffer.isBuffer(body)) return reply.header('content-length', body.length).send(body);
  if (body.length !== undefined) reply.header('content-length', body.length);
  return reply.send(Readable.from(body.chunks, { objectMode: false }));
}

async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return Buffer.concat(parts);
}

/** Whether an empty-list fault is pending for this request (list routes only). */
export function wantsEmptyList(request: FastifyRequest): boolean {
  return pendingFault(request)?.kind === 'emptyList';
}
