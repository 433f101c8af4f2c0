import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { eventually, freePort } from './net.js';

/**
 * Daemons (`schoolbridge start`, each a process of its own) on one PostgreSQL database: the same
 * config for all of them but the port, as replicas behind a load balancer would have.
 */
const BIN = path.join(import.meta.dirname, '..', '..', 'bin', 'schoolbridge.js');

export interface Replica {
  index: number;
  url: string;
  child: ChildProcess;
  /** What it wrote on stdout (its warnings and errors) and stderr so far, for the message of a failed wait. */
  output(): string;
  alive(): boolean;
  /** kill -9; resolves once it is gone. */
  kill(): Promise<void>;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** `config` is the shared config without `server` (each replica gets its port). */
export async function startReplicas(dir: string, count: number, config: Record<string, unknown>): Promise<Replica[]> {
  const replicas: Replica[] = [];
  const state = (r: Replica) => (r.alive() ? 'running' : `exited with ${r.child.exitCode ?? r.child.signalCode}`);
  try {
    for (let index = 0; index < count; index++) replicas.push(await startReplica(dir, index, config));
    await Promise.all(replicas.map((r) => eventually(async () => ((await fetch(`${r.url}/healthz`).then((res) => res.ok, () => false)) ? true : undefined), 45_000,
      () => `replica ${r.index} to listen on ${r.url} (${state(r)}): ${r.output().slice(-1500)}`)));
  } catch (error) {
    // The caller never gets these to stop: the ones that did start would run on after the test.
    await Promise.all(replicas.map((r) => r.kill()));
    throw error;
  }
  return replicas;
}

export async function startReplica(dir: string, index: number, config: Record<string, unknown>): Promise<Replica> {
  const port = await freePort();
  const file = path.join(dir, `replica-${index}.yaml`);
  // A directory of its own for what a replica keeps outside the database (its sandbox's document):
  // replicas sharing one would write one file at once, and one could read another's half-written.
  const store = { ...(config.store as Record<string, unknown>), dir: path.join(dir, `replica-${index}`) };
  await writeFile(file, JSON.stringify({ ...config, store, server: { host: '127.0.0.1', port, publicUrl: `http://127.0.0.1:${port}` } }));
  const child = spawn(process.execPath, [BIN, 'start', '-c', file], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_NO_WARNINGS: '1' } });
  let output = '';
  // The last lines only: a replica under load may warn for as long as a test runs.
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8192));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    index,
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => output,
    alive,
    async kill() {
      if (!alive()) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (!alive()) return child.exitCode;
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      return exited;
    },
  };
}
