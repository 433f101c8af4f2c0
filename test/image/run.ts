import { spawn, type ChildProcess } from 'node:child_process';
import { chown, mkdir, readdir, readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ImageSpec } from './dockerfile.js';

/**
 * The image run without Docker: its runtime stage's files, user, environment, working directory and
 * entrypoint, in a root of its own. A mount namespace (unshare) holds a read-only tmpfs root with the
 * machine's /usr, /etc and /dev, the project's files bound read-only where the Dockerfile copies
 * them, and one writable directory at each VOLUME; a PID namespace makes the entrypoint PID 1 and a
 * network namespace gives the container a loopback of its own, as Docker does (so the image's own
 * port, 8080, is free). Commands in the container run through nsenter, like `docker exec`. Node.js is
 * the one running the tests (bound where the image has it, /usr/local/bin), so the native addon in
 * node_modules matches it. Needs root (CI runs as root) and iproute2.
 */
export interface Container {
  /** The container's PID 1 (the entrypoint), as the host numbers it. */
  pid: number;
  /** stderr and stdout so far. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Runs a command in the container as its user (docker exec). */
  exec(argv: string[]): Promise<{ code: number; stdout: string }>;
  /** SIGTERM to PID 1 (docker stop). */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(): void;
}

export interface RunOptions {
  /** The host directory mounted at each VOLUME (docker run -v). */
  volume: string;
  /** More environment (docker run -e). */
  env?: Record<string, string>;
  /** Host files bound read-only into the container (docker run -v file:target:ro). */
  files?: Record<string, string>;
  /** Arguments after the entrypoint instead of CMD. */
  command?: string[];
}

/** The node image's `node` user. */
const USERS: Record<string, string> = { node: '1000:1000', root: '0:0' };

const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

async function mountLines(spec: ImageSpec, root: string, options: RunOptions): Promise<string[]> {
  const lines = [`mount -t tmpfs -o mode=755 image-root ${quote(root)}`];
  const bind = (source: string, target: string, isDir: boolean, rw = false) => {
    const at = quote(path.join(root, target));
    lines.push(isDir ? `mkdir -p ${at}` : `mkdir -p ${quote(path.dirname(path.join(root, target)))} && touch ${at}`);
    lines.push(`mount --rbind ${quote(source)} ${at}`);
    if (!rw) lines.push(`mount -o remount,bind,ro ${at}`);
  };
  for (const dir of ['usr', 'etc']) bind(`/${dir}`, dir, true);
  for (const link of ['bin', 'sbin', 'lib', 'lib64']) lines.push(`if [ -L /${link} ]; then ln -s "$(readlink /${link})" ${quote(path.join(root, link))}; elif [ -d /${link} ]; then mkdir ${quote(path.join(root, link))} && mount --rbind /${link} ${quote(path.join(root, link))}; fi`);
  bind('/dev', 'dev', true, true);
  bind(path.dirname(process.execPath), 'usr/local/bin', true);
  const files = Object.entries(options.files ?? {});
  for (const copy of spec.copies) {
    for (const source of copy.sources) {
      const from = copy.from ? path.resolve(source.replace(/^\/app\//, '')) : path.resolve(source);
      const real = await realpath(from);
      const isDir = (await stat(real)).isDirectory();
      const target = copy.dest.endsWith('/') && !isDir ? path.join(spec.workdir, copy.dest, path.basename(source)) : path.resolve(spec.workdir, copy.dest);
      if (!isDir || !files.some(([, file]) => file.startsWith(`${target}/`))) {
        bind(real, target, isDir);
        continue;
      }
      // A file mounted into a copied directory (docker run -v file:/app/config/x.yaml): the directory
      // is assembled entry by entry on a tmpfs, so the mount point can be made without touching the source.
      const at = quote(path.join(root, target));
      lines.push(`mkdir -p ${at}`, `mount -t tmpfs -o mode=755 copied ${at}`);
      for (const entry of await readdir(real, { withFileTypes: true })) bind(path.join(real, entry.name), path.join(target, entry.name), entry.isDirectory());
      for (const [host, file] of files.filter(([, file]) => file.startsWith(`${target}/`))) bind(host, file, false);
      lines.push(`mount -o remount,ro ${at}`);
    }
  }
  for (const volume of spec.volumes) bind(options.volume, volume, true, true);
  for (const [host, target] of files.filter(([, file]) => !spec.copies.some((copy) => file.startsWith(`${path.resolve(spec.workdir, copy.dest)}/`)))) bind(host, target, false);
  lines.push(`mkdir ${quote(path.join(root, 'proc'))} && mount -t proc proc ${quote(path.join(root, 'proc'))}`);
  // Nothing but the volumes is writable: the root itself goes read-only last.
  lines.push(`mount -o remount,ro ${quote(root)}`);
  return lines;
}

function envArgs(spec: ImageSpec, extra: Record<string, string>): string[] {
  const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/home/node', ...spec.env, ...extra };
  return Object.entries(env).map(([key, value]) => `${key}=${value}`);
}

export async function runImage(spec: ImageSpec, root: string, options: RunOptions): Promise<Container> {
  const user = USERS[spec.user] ?? spec.user;
  const [uid, gid] = user.split(':').map(Number);
  await mkdir(root, { recursive: true });
  await mkdir(options.volume, { recursive: true });
  await chown(options.volume, uid!, gid!);
  const argv = [...spec.entrypoint, ...(options.command ?? spec.cmd)];
  const script = [
    'set -eu',
    'ip link set lo up',
    ...(await mountLines(spec, root, options)),
    `exec chroot --userspec=${user} ${quote(root)} /usr/bin/env -i -C ${quote(spec.workdir)} ${envArgs(spec, options.env ?? {}).map(quote).join(' ')} ${argv.map(quote).join(' ')}`,
  ].join('\n');
  const child: ChildProcess = spawn('unshare', ['--mount', '--pid', '--net', '--fork', '--kill-child=SIGKILL', '--propagation', 'private', 'sh', '-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const pid = await pidOne(child.pid!, path.basename(argv[0]!).slice(0, 15), exited, () => output);
  const exec = (command: string[]) =>
    new Promise<{ code: number; stdout: string }>((resolve) => {
      const run = spawn('nsenter', ['--target', String(pid), '--mount', '--pid', '--net', '--root', '--wd', `--setuid=${uid}`, `--setgid=${gid}`, '/usr/bin/env', '-i', ...envArgs(spec, options.env ?? {}), ...command], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      run.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      run.stderr.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      run.once('exit', (code) => resolve({ code: code ?? 1, stdout }));
    });
  return {
    pid,
    output: () => output,
    exited,
    exec,
    async stop() {
      process.kill(pid, 'SIGTERM');
      return exited;
    },
    kill() {
      // The namespace's PID 1 first: it runs as the image's user, so unshare's --kill-child does not
      // reach it (a change of user clears the parent-death signal), and it would outlive the test.
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // it has ended
      }
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/**
 * The namespace's PID 1 as the host numbers it: unshare's forked child, once it runs the entrypoint
 * (`comm` is its program's name): before that, its root and mounts are still being made.
 */
async function pidOne(unshare: number, program: string, exited: Promise<unknown>, output: () => string): Promise<number> {
  let done = false;
  void exited.then(() => (done = true));
  for (;;) {
    const children = (await readFile(`/proc/${unshare}/task/${unshare}/children`, 'utf8').catch(() => '')).trim().split(/\s+/).filter(Boolean);
    const child = children[0];
    if (child && (await readFile(`/proc/${child}/comm`, 'utf8').catch(() => '')).trim() === program) return Number(child);
    if (done) throw new Error(`the container exited before its entrypoint ran:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
