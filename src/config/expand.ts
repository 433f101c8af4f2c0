/**
 * `${NAME}` and `${NAME:-default}` expansion, applied to string values of the parsed YAML (not to the
 * raw text, so a variable's value can never change the document's structure). A default may hold
 * references itself (`${DATABASE_URL:-${PG_URL}}`, as in a shell or Docker Compose), expanded only
 * when it is taken. A `${` that does not begin a whole reference (`${A` with no end, `${A-x}`,
 * `${A:?x}`, `${ A }`) is a problem, not text: taken as written it would become a directory's name or
 * a password. `$NAME` without braces is text. Pure: the environment is passed in.
 */
export type ExpandProblem =
  /** `variable` is unset and has no default; `within`: the references whose default it is, outermost first. */
  | { path: (string | number)[]; variable: string; within: string[] }
  /** Text from a `${` that does not begin a whole reference: its first characters. */
  | { path: (string | number)[]; malformed: string };

type Env = Readonly<Record<string, string | undefined>>;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

interface Reference {
  name: string;
  fallback: string | undefined;
  /** Index just past its closing brace. */
  end: number;
}

/** The reference that starts at `start` (at its `${`), or undefined when the text there is not one. */
function readReference(text: string, start: number): Reference | undefined {
  const name = NAME.exec(text.slice(start + 2))?.[0];
  if (!name) return undefined;
  let i = start + 2 + name.length;
  if (text[i] === '}') return { name, fallback: undefined, end: i + 1 };
  if (!text.startsWith(':-', i)) return undefined;
  const from = i + 2;
  // The default ends at the brace that closes this reference: each `${` in it opens one more.
  let depth = 0;
  for (i = from; i < text.length; i++) {
    if (text.startsWith('${', i)) {
      depth += 1;
      i += 1;
    } else if (text[i] === '}') {
      if (depth === 0) return { name, fallback: text.slice(from, i), end: i + 1 };
      depth -= 1;
    }
  }
  return undefined;
}

/** How much of a malformed reference a problem quotes. */
const QUOTED = 40;

function expandString(text: string, env: Env, problems: ExpandProblem[], path: (string | number)[], within: string[] = []): string {
  let out = '';
  let i = 0;
  for (let start = text.indexOf('${'); start >= 0; start = text.indexOf('${', i)) {
    const reference = readReference(text, start);
    out += text.slice(i, start);
    if (!reference) {
      problems.push({ path, malformed: text.slice(start, start + QUOTED) });
      return out + text.slice(start);
    }
    i = reference.end;
    const found = env[reference.name];
    if (found !== undefined && found !== '') out += found;
    else if (reference.fallback !== undefined) out += expandString(reference.fallback, env, problems, path, [...within, reference.name]);
    else if (found === undefined) problems.push({ path, variable: reference.name, within });
  }
  return out + text.slice(i);
}

export function expandValue(value: unknown, env: Env, problems: ExpandProblem[], path: (string | number)[] = []): unknown {
  if (typeof value === 'string') return expandString(value, env, problems, path);
  if (Array.isArray(value)) return value.map((item, index) => expandValue(item, env, problems, [...path, index]));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = expandValue(item, env, problems, [...path, key]);
    return out;
  }
  return value;
}
