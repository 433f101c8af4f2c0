// Runs a TypeScript entry of the daemon: the executable's (bin/schoolbridge.js) and each worker
// thread's. There is no build step (README, "Why no build step"): esbuild, which tsx runs
// on, bundles the entry with the sources it imports and the packages they use into one ES module,
// and keeps it under node_modules/.cache/schoolbridge with the list of its sources. It is built
// again when one of them, an installed package, or the loader changed. A process or thread then
// loads one module rather than every source through a loader and every file of the packages. Where
// no such bundle can be made or kept (a read-only installation built without one), tsx's loader
// runs the sources themselves, as it would anyway.
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import module from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { withSourcesOnly } from './source-map-of-sources.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CACHE = path.join(ROOT, 'node_modules', '.cache', 'schoolbridge');
const SELF = fileURLToPath(import.meta.url);
/** The loader's own files: a bundle made by another version of them is made again. */
const LOADER = [SELF, fileURLToPath(new URL('./source-map-of-sources.mjs', import.meta.url))];
const PACKAGES = path.join(ROOT, 'node_modules') + path.sep;

/** The entries: the executable's and the worker threads' (their *-boot.mjs files name them too). */
const ENTRIES = ['src/cli/main.ts', 'src/store/sqlite/db-thread.ts', 'src/upstream/list/worker-thread.ts'];

/** Imports the TypeScript module at `entryUrl` (a file: URL) and returns its namespace. */
export async function loadTypeScript(entryUrl) {
  const bundle = await bundleOf(fileURLToPath(entryUrl)).catch(() => undefined);
  if (bundle) {
    // Node.js 22.1 and later keep V8's compiled code of the bundle beside it: a process or thread
    // after the first compiles little of it again (Node.js 20 has no such cache, and a directory
    // that cannot be written only leaves it off).
    module.enableCompileCache?.(path.join(CACHE, 'compiled'));
    // Stack traces name the sources, as under tsx.
    process.setSourceMapsEnabled(true);
    return import(pathToFileURL(bundle).href);
  }
  const { register } = await import('tsx/esm/api');
  register();
  return import(entryUrl.toString());
}

/** The path of a fresh bundle of `entry`, built if there is none; undefined when none can be had. */
async function bundleOf(entry) {
  const base = baseOf(entry);
  const stampOfSelf = stampOfLoader();
  if (fresh(`${base}.json`, stampOfSelf)) return `${base}.mjs`;
  return build(entry, base, stampOfSelf);
}

function baseOf(entry) {
  return path.join(CACHE, path.relative(ROOT, entry).replace(/\.[cm]?ts$/, '').replaceAll(path.sep, '+'));
}

function stampOfLoader() {
  return LOADER.map(stamp).join(' ');
}

function stamp(file) {
  const stats = statSync(file);
  return `${stats.mtimeMs}:${stats.size}`;
}

function fresh(manifestFile, stampOfSelf) {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
  } catch {
    return false;
  }
  if (manifest.loader !== stampOfSelf) return false;
  try {
    for (const [file, known] of Object.entries(manifest.sources)) if (stamp(path.join(ROOT, file)) !== known) return false;
  } catch {
    return false;
  }
  return true;
}

// A module's own URL stays its source file's, not the bundle's: modules find files beside them (a
// worker thread's entry, package.json) by it. It is made from the bundle's own URL, so that a tree
// moved elsewhere with its bundles (an image's files bound elsewhere) keeps working.
const sourceUrls = {
  name: 'source-urls',
  setup(build) {
    build.onLoad({ filter: /\.[cm]?[jt]s$/ }, async (args) => {
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return undefined;
      const fromBundle = path.relative(CACHE, args.path).split(path.sep).join('/');
      const url = `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`;
      return { contents: text.replaceAll('import.meta.url', url), loader: /\.[cm]?ts$/.test(args.path) ? 'ts' : 'js' };
    });
  },
};

// The packages are bundled too: a process then reads, compiles and links one module, rather than
// resolving and loading each of the hundreds of files that fastify, undici, zod and the others are
// made of. Left as imports: the native addon, whose binding is found beside its own files; the
// Google Sheets client, imported only when a google-sheets connector runs, and large; packages
// imported only when present (pg-native) or only by the loader itself.
const EXTERNAL = ['better-sqlite3', '@googleapis/sheets', 'pg-native', 'esbuild', 'tsx'];
// The CommonJS packages in an ES module: their require() of Node's modules, and of what is left as an
// import, is the bundle's own, made from its URL (the packages stay in the node_modules above it).
const REQUIRE = "import { createRequire as createRequireOfBundle } from 'node:module'; const require = createRequireOfBundle(import.meta.url);";
// A package is stamped by its package.json and by npm's record of the installation, which npm
// rewrites at each install: an install can change a package's files and keep each one's size and
// time (npm gives every installed file the same time), so the bundle is made again after any
// install. The project's own sources are stamped file by file.
const INSTALLED = 'node_modules/.package-lock.json';
const PACKAGE = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//;

/** What stamps the source `input` (a path from the root): itself, or its package's package.json. */
function stamped(input) {
  const inPackage = PACKAGE.exec(input);
  return inPackage ? `${inPackage[1]}/package.json` : input;
}

/** The map's text, with the packages' code left unmapped (source-map-of-sources.mjs). */
function ownSourcesMap(text) {
  const map = withSourcesOnly(JSON.parse(text), (source) => !path.resolve(CACHE, source).startsWith(PACKAGES));
  return JSON.stringify(map);
}

async function build(entry, base, stampOfSelf) {
  const esbuild = await import('esbuild');
  // esbuild's service process would stay for the daemon's life (tens of MB) once a build started it.
  const result = await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: EXTERNAL,
    banner: { js: REQUIRE },
    absWorkingDir: ROOT,
    tsconfig: path.join(ROOT, 'tsconfig.json'),
    outfile: `${base}.mjs`,
    write: false,
    metafile: true,
    sourcemap: 'linked',
    sourcesContent: false,
    plugins: [sourceUrls],
    logLevel: 'silent',
  }).finally(() => esbuild.stop());
  const sources = { 'tsconfig.json': stamp(path.join(ROOT, 'tsconfig.json')) };
  try {
    sources[INSTALLED] = stamp(path.join(ROOT, INSTALLED));
  } catch {
    // Installed by another package manager: each package is stamped by its package.json alone.
  }
  for (const input of Object.keys(result.metafile.inputs)) sources[stamped(input)] ??= stamp(path.join(ROOT, stamped(input)));
  mkdirSync(CACHE, { recursive: true });
  // Written aside and renamed: a process starting meanwhile reads the old bundle or the new one.
  const unique = randomUUID();
  for (const file of result.outputFiles) {
    writeFileSync(`${file.path}.${unique}`, file.path.endsWith('.map') ? ownSourcesMap(file.text) : file.contents);
    renameSync(`${file.path}.${unique}`, file.path);
  }
  writeFileSync(`${base}.json.${unique}`, JSON.stringify({ loader: stampOfSelf, sources }));
  renameSync(`${base}.json.${unique}`, `${base}.json`);
  return `${base}.mjs`;
}

// Run as a program:
//   node src/load-typescript.mjs --prepare          builds every entry's bundle ahead of time: an
//                                                   image does it while it is built, since nothing
//                                                   under /app may be written once it runs;
//   node src/load-typescript.mjs FILE.ts [ARGS...]  runs FILE.ts (a test's child process), which
//                                                   sees the arguments as if it had been started itself.
if (process.argv[1] && path.resolve(process.argv[1]) === SELF) {
  if (process.argv[2] === '--prepare') {
    for (const entry of ENTRIES) await build(path.join(ROOT, entry), baseOf(path.join(ROOT, entry)), stampOfLoader());
  } else if (process.argv[2]) {
    process.argv.splice(1, 1);
    process.argv[1] = path.resolve(process.argv[1]);
    await loadTypeScript(pathToFileURL(process.argv[1]));
  }
}
