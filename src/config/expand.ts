/**
 * `${NAME}` and `${NAME:-default}` expansion, applied to string values of the parsed YAML (not to the
 * raw text, so a variable's value can never change the document's structure). Pure: the environment
 * is passed in.
 */
export interface ExpandProblem {
  path: (string | number)[];
  variable: string;
}

const PATTERN = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export function expandValue(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  problems: ExpandProblem[],
  path: (string | number)[] = [],
): unknown {
  if (typeof value === 'string') {
    return value.replace(PATTERN, (_match, name: string, fallback: string | undefined) => {
      const found = env[name];
      if (found !== undefined && found !== '') return found;
      if (fallback !== undefined) return fallback;
      if (found === '') return '';
      problems.push({ path, variable: name });
      return '';
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => expandValue(item, env, problems, [...path, index]));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = expandValue(item, env, problems, [...path, key]);
    return out;
  }
  return value;
}
