import type { Schema } from '../upstream/schemas.js';
import { POLLED_STREAMS } from './registry.js';
import type { StreamDescription } from './stream.js';

/** What the rest of the daemon asks of the registry of polled streams (registry.ts). */
export { POLLED_STREAMS };

export type PolledStreamName = (typeof POLLED_STREAMS)[number]['name'];
export const POLLED_STREAM_NAMES: readonly PolledStreamName[] = POLLED_STREAMS.map((stream) => stream.name);

/** The record type of a stream's list, as its schema checks it. */
export type StreamRecord<Name extends PolledStreamName> =
  Extract<(typeof POLLED_STREAMS)[number], { name: Name }>['schema'] extends Schema<infer R> ? R : never;

export function polledStream(name: PolledStreamName): StreamDescription<PolledStreamName> {
  const found = POLLED_STREAMS.find((stream) => stream.name === name);
  if (!found) throw new Error(`not a polled stream: ${String(name)}`);
  return found;
}

/**
 * The streams a poll reads: those polled whatever the config says, those `poll.streams` lists, and
 * those a connector takes (docs/streams.md "Which streams are polled").
 */
export function streamsToPoll(listed: readonly string[] = [], taken: (stream: PolledStreamName) => boolean = () => false): PolledStreamName[] {
  return POLLED_STREAMS.filter((stream) => stream.alwaysPolled || listed.includes(stream.name) || taken(stream.name)).map((stream) => stream.name);
}

/** The streams whose records are people (the console names them). */
export const PEOPLE_STREAMS: readonly PolledStreamName[] = POLLED_STREAMS.filter((stream) => stream.person).map((stream) => stream.name);

export { compareKeys, isKey, parseKey, type Key, type KeyType } from './key.js';
export { describeStream, type PersonDescription, type StreamDescription } from './stream.js';
export { groups, type Group } from './groups.js';
export { students, type Student } from './students.js';
export { users, type AdditionalData, type User } from './users.js';
