import type { FieldChange } from '../records.js';
import { canonicalJson, isPlainObject } from './canonical.js';

/**
 * Every changed leaf between two versions of a record, as dotted paths in sorted order
 * (`user.lastName`, `user.parentUser.additionalData.email`). Objects on both sides are walked;
 * anything else is a leaf: arrays are compared whole, and an object that becomes null (or the
 * reverse) is one change at its own path carrying the whole value. A field that appears has no
 * `from`, a field that vanishes has no `to` (JSON has no undefined), so a change is always
 * reversible and `applyFieldChanges(before, changes)` gives `after` back.
 *
 * Paths are dotted, so a key that itself contains a dot would be ambiguous; API v2 keys are
 * camelCase identifiers and never do.
 */
export function leafChanges(before: unknown, after: unknown, prefix = ''): FieldChange[] {
  const out: FieldChange[] = [];
  walk(before, after, prefix, out);
  return out;
}

function walk(before: unknown, after: unknown, path: string, out: FieldChange[]): void {
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    for (const key of [...keys].sort()) {
      const child = path === '' ? key : `${path}.${key}`;
      const hasBefore = Object.hasOwn(before, key) && before[key] !== undefined;
      const hasAfter = Object.hasOwn(after, key) && after[key] !== undefined;
      if (hasBefore && hasAfter) walk(before[key], after[key], child, out);
      else if (hasBefore) out.push({ path: child, from: before[key] } as FieldChange);
      else if (hasAfter) out.push({ path: child, to: after[key] } as FieldChange);
    }
    return;
  }
  if (!sameLeaf(before, after)) out.push({ path, from: before, to: after });
}

function sameLeaf(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return canonicalJson(a) === canonicalJson(b);
}

/** Applies changes made by leafChanges to a copy of `before` (for tests and for documentation). */
export function applyFieldChanges(before: unknown, changes: readonly FieldChange[]): unknown {
  let root = structuredClone(before);
  for (const change of changes) {
    const parts = change.path === '' ? [] : change.path.split('.');
    if (parts.length === 0) {
      root = 'to' in change ? structuredClone(change.to) : undefined;
      continue;
    }
    let node = root as Record<string, unknown>;
    for (const part of parts.slice(0, -1)) node = node[part] as Record<string, unknown>;
    const last = parts[parts.length - 1] as string;
    if ('to' in change) node[last] = structuredClone(change.to);
    else delete node[last];
  }
  return root;
}
