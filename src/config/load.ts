import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { BridgeError } from '../errors.js';
import { formatIssues, formatPath } from './errors.js';
import { isSecretKey } from './mask.js';
import { describeYamlError } from './yaml-error.js';
import { expandValue, type ExpandProblem } from './expand.js';
import { configSchema, type Config } from './schema.js';

/** The package's own folder, so the embedded default is found whatever the working directory. */
const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const EMBEDDED_DEFAULT = path.join(PACKAGE_DIR, 'config', 'default.yaml');

export type Env = Readonly<Record<string, string | undefined>>;

/**
 * Which file to read (README "Commands"): `--config`, else $SCHOOLBRIDGE_CONFIG, else
 * ./config/schoolbridge.yaml if it exists, else the embedded config/default.yaml.
 */
export function resolveConfigPath(explicit: string | undefined, env: Env, cwd: string): string {
  // `--config "$CFG"` with CFG unset names no file: taking the embedded default would run a simulated
  // school against ./data instead of the one meant.
  if (explicit !== undefined && explicit.trim() === '') {
    throw new BridgeError('config.unreadable', '--config names no file (an empty path: is the variable it came from unset?)');
  }
  if (explicit) return path.resolve(cwd, explicit);
  if (env.SCHOOLBRIDGE_CONFIG) return path.resolve(cwd, env.SCHOOLBRIDGE_CONFIG);
  const local = path.resolve(cwd, 'config', 'schoolbridge.yaml');
  if (existsSync(local)) return local;
  const localDefault = path.resolve(cwd, 'config', 'default.yaml');
  return existsSync(localDefault) ? localDefault : EMBEDDED_DEFAULT;
}

export interface LoadedConfig {
  file: string;
  config: Config;
}

/** Parses YAML text into a validated Config; every problem is listed, each naming its key path. */
export function parseConfig(text: string, file: string, env: Env): Config {
  // Merge keys (`<<: *defaults`), as in a Docker Compose file: connectors that share most settings.
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true, merge: true });
  if (document.errors.length > 0) throw configError(file, describeYamlError(text, document.errors));
  let raw: unknown;
  try {
    raw = document.toJS() ?? {};
  } catch (error) {
    // The YAML library's own limits (aliases that expand without bound): the file is not a config.
    throw configError(file, [`cannot read it as YAML: ${(error as Error).message}`]);
  }
  const problems: ExpandProblem[] = [];
  const expanded = applyEnvFallbacks(expandValue(withoutExtensions(raw), env, problems), env);
  const result = configSchema.safeParse(expanded);
  const lines = problems.map((p) => `${formatPath(p.path)}: ${expandProblemText(p)}`);
  if (!result.success) {
    // A key whose variable is missing already has its line; the schema's complaint about the empty
    // value it got instead would only repeat it.
    const unset = new Set(problems.map((p) => formatPath(p.path)));
    const issues = result.error.issues.filter((issue) => !unset.has(formatPath(issue.path)));
    lines.push(...formatIssues(issues, (at) => knownKeys(at, expanded), (at) => valueAt(expanded, at), (at) => valueAt(raw, at)));
  }
  if (lines.length > 0) throw configError(file, lines);
  return result.data!;
}

function expandProblemText(problem: ExpandProblem): string {
  if ('malformed' in problem) {
    // The text may be a secret that holds "${": a secret key's is not quoted.
    const key = problem.path.at(-1);
    const quoted = typeof key === 'string' && isSecretKey(key) ? 'its value' : `"${problem.malformed}"`;
    return `${quoted} is not a whole reference to a variable: write \${NAME} or \${NAME:-default} (a default may hold one: \${A:-\${B}})`;
  }
  const { variable, within } = problem;
  if (within.length === 0) return `environment variable ${variable} is not set (set it, or write \${${variable}:-default})`;
  const names = [...within, variable];
  const none = names.length === 2 ? `neither ${names[0]} nor its default ${variable}` : `none of ${names.join(', ')} (each the default of the one before)`;
  return `${none} is set (set one, or write \${${variable}:-default})`;
}

export function loadConfig(explicit: string | undefined, env: Env = process.env, cwd = process.cwd()): LoadedConfig {
  const file = resolveConfigPath(explicit, env, cwd);
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (cause) {
    throw new BridgeError('config.unreadable', `${file}: cannot read the config file (${(cause as Error).message})`, { cause });
  }
  return { file, config: parseConfig(utf8Text(bytes, file), file, env) };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The file's text. Bytes that are not UTF-8 (a file saved as Latin-1, a binary file) would otherwise
 * become U+FFFD unnoticed, in a path or a secret.
 */
function utf8Text(bytes: Buffer, file: string): string {
  try {
    return utf8.decode(bytes);
  } catch {
    const at = firstInvalidByte(bytes);
    const where = at === undefined ? '' : `line ${bytes.subarray(0, at).toString('latin1').split('\n').length}: `;
    const which = at === undefined ? '' : ` (byte 0x${bytes[at]!.toString(16).padStart(2, '0')} at offset ${at})`;
    throw configError(file, [`${where}not UTF-8 text${which}: save the file as UTF-8`]);
  }
}

/** Where the first sequence that is not UTF-8's shape begins (a lead byte, then its continuation bytes). */
function firstInvalidByte(bytes: Buffer): number | undefined {
  for (let i = 0; i < bytes.length; ) {
    const lead = bytes[i]!;
    const length = lead < 0x80 ? 1 : lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 0;
    if (length === 0) return i;
    for (let k = 1; k < length; k++) if (i + k >= bytes.length || (bytes[i + k]! & 0xc0) !== 0x80) return i;
    i += length;
  }
  // Well shaped, yet refused (an overlong form, a surrogate): the decoder knows, the offset is not told.
  return undefined;
}

/** The document without its top-level `x-…` keys: a place for anchors that merge keys take from, as in Docker Compose. */
function withoutExtensions(raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  return Object.fromEntries(Object.entries(raw).filter(([key]) => !key.startsWith('x-')));
}

function configError(file: string, lines: string[]): BridgeError {
  const message = `${file}: invalid configuration:\n${lines.map((l) => `  ${l}`).join('\n')}`;
  return new BridgeError('config.invalid', message, { context: { file, problems: lines } });
}

/** GOOGLE_APPLICATION_CREDENTIALS stands in for a google-sheets connector's missing credentials. */
function applyEnvFallbacks(value: unknown, env: Env): unknown {
  const credentials = env.GOOGLE_APPLICATION_CREDENTIALS;
  if (!credentials || typeof value !== 'object' || value === null) return value;
  const connectors = (value as { connectors?: unknown }).connectors;
  if (!Array.isArray(connectors)) return value;
  for (const connector of connectors) {
    if (connector && typeof connector === 'object' && connector.type === 'google-sheets' && !connector.credentialsFile && !connector.accessToken) {
      connector.credentialsFile = credentials;
    }
  }
  return value;
}

/** The value written at a key path of the parsed document. */
function valueAt(document: unknown, at: readonly PropertyKey[]): unknown {
  let value = document;
  for (const part of at) value = value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[part] : undefined;
  return value;
}

/**
 * The keys the schema knows at `at`, for "did you mean" hints, in the config `root` as written: of a
 * union (a connector), those of the option whose `type` the value names, if one does, else of every
 * option.
 */
function knownKeys(at: readonly PropertyKey[], root: unknown): string[] {
  let schema: z.core.$ZodType = configSchema;
  let value = root;
  for (const part of at) {
    schema = chosen(unwrap(schema), value);
    const def = schema._zod.def as { type: string; shape?: Record<string, z.core.$ZodType>; element?: z.core.$ZodType };
    if (def.type === 'object' && def.shape && typeof part === 'string' && def.shape[part]) schema = def.shape[part];
    else if (def.type === 'array' && def.element && typeof part === 'number') schema = def.element;
    else return [];
    value = (value as Record<PropertyKey, unknown> | undefined)?.[part];
  }
  const def = chosen(unwrap(schema), value)._zod.def as { type: string; shape?: Record<string, unknown>; options?: z.core.$ZodType[] };
  if (def.type === 'object' && def.shape) return Object.keys(def.shape);
  if (def.type === 'union' && def.options) {
    return def.options.flatMap((option) => Object.keys((unwrap(option)._zod.def as { shape?: object }).shape ?? {}));
  }
  return [];
}

/** Of a union, the option whose `type` literal `value` names; any other schema, or no such option: the schema itself. */
function chosen(schema: z.core.$ZodType, value: unknown): z.core.$ZodType {
  const def = schema._zod.def as { type: string; options?: z.core.$ZodType[] };
  if (def.type !== 'union' || !def.options) return schema;
  const type = (value as { type?: unknown } | undefined)?.type;
  const option = def.options.find((candidate) => {
    const literal = (unwrap(candidate)._zod.def as { shape?: Record<string, z.core.$ZodType> }).shape?.type;
    return literal !== undefined && ((unwrap(literal)._zod.def as { values?: unknown[] }).values ?? []).includes(type);
  });
  return option ? unwrap(option) : schema;
}

function unwrap(schema: z.core.$ZodType): z.core.$ZodType {
  let current = schema;
  for (let i = 0; i < 10; i++) {
    const def = current._zod.def as { type: string; innerType?: z.core.$ZodType; in?: z.core.$ZodType; out?: z.core.$ZodType; schema?: z.core.$ZodType };
    if (def.innerType) current = def.innerType;
    else if (def.type === 'pipe' && def.in) current = def.type === 'pipe' && def.out && (def.in._zod.def as { type: string }).type === 'transform' ? def.out : def.in;
    else break;
  }
  return current;
}
